"""The rumour rule, in one place. (pure)

What the pipeline extracted or a player claimed is a rumour while its confidence is below the
campaign's review threshold and the DM has not confirmed it: tools mark it unconfirmed, the
hot context marks it "(rumour)", and the DM's review queue lists it. What the DM states is
confirmed, unless the DM gives it a confidence below 1 (`dm_statement`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.domain.models import DEFAULT_REVIEW_THRESHOLD, Provenance, build


class RumourRule(BaseModel):
    model_config = ConfigDict(frozen=True)

    threshold: float = Field(default=DEFAULT_REVIEW_THRESHOLD, ge=0, le=1)

    def is_rumour(self, provenance: Provenance) -> bool:
        return provenance.confidence < self.threshold and not provenance.dm_confirmed


def dm_statement(confidence: float = 1.0, session_id: str | None = None) -> Provenance:
    """The provenance of what the DM states: confirmed at full confidence; below it, a
    rumour like any other until the DM confirms it in review."""
    return build(
        Provenance,
        confidence=confidence,
        source="dm",
        session_id=session_id,
        dm_confirmed=confidence >= 1.0,
    )
