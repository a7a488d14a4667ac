"""The campaign file: entities, relationships and facts as a DM writes them. (pure)

References use names, aliases or ids; visibility is `known_by: [NPC names]` and `secret`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.domain.models import Confidence, Key, Name
from glyphoxa_mcp.domain.vocabulary import EntityType


class Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Visible(Strict):
    known_by: tuple[str, ...] = Field(default=(), description="Names or ids of the NPCs who know.")
    secret: bool = False


class EntityEntry(Visible):
    name: Name
    type: EntityType
    id: Key | None = None
    aliases: tuple[Name, ...] = ()
    attributes: dict[str, Any] = Field(default_factory=dict)


class RelationshipEntry(Visible):
    source: str
    type: Annotated[str, Field(min_length=1, max_length=64)]
    target: str
    confidence: Confidence = 1.0
    attributes: dict[str, Any] = Field(default_factory=dict)


class FactEntry(Visible):
    text: Annotated[str, Field(min_length=1, max_length=5000)]
    subject: str | None = None
    story_day: float | None = None
    story_label: str | None = None
    confidence: Confidence = 1.0


class CampaignInfo(Strict):
    id: Key
    name: Name


class CampaignFile(Strict):
    campaign: CampaignInfo | None = None
    entities: tuple[EntityEntry, ...] = ()
    relationships: tuple[RelationshipEntry, ...] = ()
    facts: tuple[FactEntry, ...] = ()
