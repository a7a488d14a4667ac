"""The rumour rule, in one place. (pure)

What the pipeline extracted or a player claimed is a rumour while its confidence is below the
campaign's review threshold and the DM has not confirmed it: tools mark it unconfirmed, the
hot context marks it "(rumour)", and the DM's review queue lists it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.domain.models import DEFAULT_REVIEW_THRESHOLD, Provenance


class RumourRule(BaseModel):
    model_config = ConfigDict(frozen=True)

    threshold: float = Field(default=DEFAULT_REVIEW_THRESHOLD, ge=0, le=1)

    def is_rumour(self, provenance: Provenance) -> bool:
        return provenance.confidence < self.threshold and not provenance.dm_confirmed
