"""What the memory tools return: pydantic models, so every tool has an outputSchema and
answers with structuredContent as well as JSON text."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from glyphoxa_mcp.views.limits import Clamped


class CountLimit(BaseModel):
    requested: int
    used: int
    clamped: bool = Field(
        description="True when the requested value was outside the allowed range."
    )

    @classmethod
    def of(cls, clamped: Clamped) -> CountLimit:
        return cls(requested=clamped.requested, used=clamped.used, clamped=clamped.was_clamped)


class ProvenanceView(BaseModel):
    session_id: str | None
    confidence: float
    source: str = Field(description="stated, inferred, dm or import.")
    dm_confirmed: bool
    unconfirmed: bool = Field(
        description="Low confidence and not confirmed by the DM, or heard by word: treat it "
        "as a rumour."
    )
    heard_from: str | None = Field(
        default=None,
        description="Known only by word of a scene you were not at: who told you, or 'word "
        "going around'.",
    )


class RelationshipView(BaseModel):
    id: int
    type: str
    direction: Literal["outgoing", "incoming"]
    other_id: str
    other_name: str
    other_type: str
    sentence: str
    provenance: ProvenanceView
    secret: bool = Field(description="Secret knowledge: not common knowledge in the world.")


class EntityView(BaseModel):
    id: str
    name: str
    type: str
    aliases: list[str]
    attributes: dict[str, Any]
    secret: bool
    match: Literal["exact", "alias", "partial", "fuzzy", "related", "type"]
    hops: int | None = Field(default=None, description="Hops from related_to, when given.")
    path: list[str] | None = Field(default=None, description="Entity ids from related_to.")
    relationships: list[RelationshipView]


class QueryEntitiesResult(BaseModel):
    entities: list[EntityView]
    limit: CountLimit
    depth: CountLimit | None = None
    relationships_per_entity: int | None = Field(
        default=None,
        description="Each entity lists at most this many relationships, the first by type; "
        "related_to lists one entity's connections.",
    )
    scope: str = Field(description="Whose knowledge applies: 'dm' or 'npc:<id>'.")
    note: str | None = None


class EntityRef(BaseModel):
    id: str
    name: str
    type: str


class SceneKnowledge(BaseModel):
    started_at: datetime | None = Field(description="None: the lines before any scene.")
    title: str | None
    location: str | None
    known: Literal["witnessed", "heard of"]
    heard_from: str | None = Field(
        default=None, description="Who told you of it, or 'word going around'."
    )


class SessionSummaryResult(BaseModel):
    session_id: str
    title: str | None
    started_at: datetime | None
    ended_at: datetime | None
    summary: str | None
    summary_source: str | None = Field(description="llm, extractive or dm.")
    entities: list[EntityRef] = Field(description="Entities involved in the session.")
    scope: str
    scenes: list[SceneKnowledge] | None = Field(
        default=None,
        description="An NPC's view of a session it was not wholly at: the scenes it "
        "witnessed and those it only heard of (the rest it knows nothing of).",
    )
    note: str | None = None


class SessionHit(BaseModel):
    session_id: str | None
    session_title: str | None
    text: str = Field(description="What was said, one 'Speaker: words' line per utterance.")
    started_at: datetime | None
    ended_at: datetime | None
    score: float = Field(description="Fused relevance; higher is better.")
    entry_ids: list[int] = Field(description="The transcript entries (L1) this text covers.")
    matched_by: list[str] = Field(
        description="Which rankings found it: meaning, words, date (said on a date the query "
        "names), graph."
    )


WORDS_ONLY_NOTE = "Ranked by words alone: the embedding model failed or was too slow."


class SearchSessionsResult(BaseModel):
    results: list[SessionHit]
    top_k: CountLimit
    scope: str
    note: str | None = None


class FactHit(BaseModel):
    kind: Literal["fact", "relationship", "lore"]
    id: int
    text: str = Field(
        description="The fact, the relationship written as a sentence, or the lore passage."
    )
    subject_id: str | None
    subject_name: str | None
    session_id: str | None
    story_day: float | None = Field(description="When it happened on the campaign's calendar.")
    story_label: str | None
    occurred_at: datetime | None = Field(description="When it happened at the table.")
    provenance: ProvenanceView
    secret: bool
    score: float
    matched_by: list[str]
    document: str | None = Field(
        default=None, description="Lore: the id of the DM's document the passage is from."
    )
    document_title: str | None = Field(default=None, description="Lore: that document's title.")
    heading: str | None = Field(
        default=None,
        description="Lore: the passage's headings in its document, 'Part > Chapter' (empty "
        "before the first heading).",
    )


class SearchFactsResult(BaseModel):
    results: list[FactHit]
    top_k: CountLimit
    entity: EntityRef | None = Field(default=None, description="The entity the search was about.")
    scope: str
    note: str | None = None
