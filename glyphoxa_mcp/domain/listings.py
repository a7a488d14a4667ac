"""What the DM's listings show: a campaign's lineage of what-if branches, a page of
entities, and what the database holds. (pure)"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from glyphoxa_mcp.domain.models import Entity


class Branch(BaseModel):
    """A campaign in its lineage, with the branches forked from it."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    forked_from: str | None
    forked_at_session: str | None
    forked_at: datetime | None
    children: tuple[Branch, ...] = ()

    def find(self, campaign_id: str) -> Branch | None:
        if self.id == campaign_id:
            return self
        for child in self.children:
            found = child.find(campaign_id)
            if found is not None:
                return found
        return None


class EntityPage(BaseModel):
    model_config = ConfigDict(frozen=True)

    entities: tuple[Entity, ...]
    total: int
    """How many entities match, on every page."""


class CampaignCounts(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    sessions: int
    entries: int
    chunks: int
    entities: int
    relationships: int
    facts: int


class DatabaseStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    location: str
    server_version: str
    pgvector_version: str
    schema_version: int
    embedding_dim: int
    campaigns: tuple[CampaignCounts, ...]
