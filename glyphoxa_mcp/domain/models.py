"""The shared values: what callers write and what stores return (entities, relationships,
facts, sessions, lines, passages), with the rules every value is checked by."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

import numpy as np
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from glyphoxa_mcp.domain.knowledge import DEFAULT_NEWS_HOPS, MAX_NEWS_HOPS, Knowledge
from glyphoxa_mcp.domain.vocabulary import (
    KEY_PATTERN,
    RELATIONSHIP_TYPE_PATTERN,
    EntityType,
    normalise_relationship_type,
)
from glyphoxa_mcp.domain.wording import rule_of
from glyphoxa_mcp.errors import InvalidInputError

M = TypeVar("M", bound=BaseModel)

MAX_NAME_CHARS = 200
MAX_UTTERANCE_CHARS = 20_000
MAX_CHUNK_CHARS = 50_000
MAX_FACT_CHARS = 5_000
MAX_ATTRIBUTES_CHARS = 64_000
MAX_QUERY_CHARS = 2_000
# A session's summary: a few pages of prose; longer is a transcript, not a summary.
MAX_SUMMARY_CHARS = 20_000


def _no_control_characters(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _aware(value: datetime) -> datetime:
    """Naive times are taken as UTC so that comparisons never mix kinds."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _small_json(value: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(value, default=str)) > MAX_ATTRIBUTES_CHARS:
        raise ValueError(f"must serialise to at most {MAX_ATTRIBUTES_CHARS} characters of JSON")
    return value


Key = Annotated[str, StringConstraints(pattern=KEY_PATTERN)]
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME_CHARS),
    AfterValidator(_no_control_characters),
]
Utterance = Annotated[
    str,
    StringConstraints(max_length=MAX_UTTERANCE_CHARS),
    AfterValidator(_no_control_characters),
]
AwareDatetime = Annotated[datetime, AfterValidator(_aware)]
Attributes = Annotated[dict[str, Any], AfterValidator(_small_json)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
# A campaign's review threshold unless it sets its own (see domain.rumours).
DEFAULT_REVIEW_THRESHOLD = 0.7
RelationshipType = Annotated[
    str,
    AfterValidator(normalise_relationship_type),
    StringConstraints(pattern=RELATIONSHIP_TYPE_PATTERN),
]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- campaigns and sessions -------------------------------------------------------------------


class Campaign(Frozen):
    id: Key
    name: Name
    created_at: datetime | None = None
    review_threshold: Confidence = Field(
        default=DEFAULT_REVIEW_THRESHOLD,
        description="Below it, unconfirmed knowledge is a rumour (sql/017).",
    )
    knowledge: Knowledge = Field(
        default=Knowledge.WITNESSED,
        description="Who reads which lines: those present ('witnessed') or every NPC.",
    )
    news_hops: Annotated[int, Field(ge=0, le=MAX_NEWS_HOPS)] = DEFAULT_NEWS_HOPS
    news_types: tuple[str, ...] = Field(
        default=(), description="The DM's relationship types that carry news, beside NEWS_TYPES."
    )


class NewSession(Frozen):
    id: Key
    title: Name | None = None
    started_at: AwareDatetime | None = None
    ended_at: AwareDatetime | None = None


class Session(Frozen):
    campaign_id: str
    id: str
    title: str | None
    started_at: datetime | None
    ended_at: datetime | None
    summary: str | None
    summary_source: Literal["llm", "extractive", "dm"] | None
    llm_pending: bool = Field(
        default=False,
        description="Ended while the LLM was unreachable: `session end --retry-llm` redoes it.",
    )
    dm_only: bool = Field(default=False, description="Only the DM may read this session.")


class SessionFact(BaseModel):
    """What holds for one session only ("the party is disguised as merchants"), shown in
    the hot context of every NPC or of one, and gone when the session ends."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    key: str
    npc_id: str | None
    text: str
    set_at: datetime


# --- L1: session log ---------------------------------------------------------------------------


class Word(Frozen):
    """One word as speech-to-text heard it, with its confidence in [0, 1]."""

    word: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    confidence: Confidence


class TextCorrection(Frozen):
    """A span of what speech-to-text heard, replaced by a known name."""

    start: Annotated[int, Field(ge=0)]
    end: Annotated[int, Field(ge=0)]
    heard: str
    entity: str
    entity_id: str | None = None
    stage: Literal["phonetic", "llm"]


class NewEntry(Frozen):
    speaker_id: Annotated[Name, StringConstraints(max_length=128)]
    speaker_name: Name
    text: Annotated[Utterance, AfterValidator(_not_blank)]
    raw_text: Utterance | None = Field(
        default=None, description="What speech-to-text heard; defaults to `text`."
    )
    npc_id: Key | None = None
    spoken_at: AwareDatetime
    duration_ms: Annotated[int, Field(ge=0, le=86_400_000)] | None = None
    words: tuple[Word, ...] | None = Field(
        default=None, description="Speech-to-text words with confidences, when known."
    )
    source_key: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None,
        description="Identifies the utterance across re-ingestion; derived from its content "
        "when absent.",
    )
    corrections: tuple[TextCorrection, ...] = Field(
        default=(), description="The names put back into raw_text to make text."
    )


class Entry(Frozen):
    id: int
    session_id: str
    speaker_id: str
    speaker_name: str
    text: str
    raw_text: str
    npc_id: str | None
    spoken_at: datetime
    duration_ms: int | None
    words: tuple[Word, ...] | None = None
    corrections: tuple[TextCorrection, ...] = ()
    dm_only: bool = False


class EntryMatch(Frozen):
    entry: Entry
    rank: float = Field(description="BM25 relevance to the query's words; higher is better.")


class SearchFilters(Frozen):
    """Filters shared by the session log and the semantic index, applied in SQL."""

    session_id: Key | None = None
    speaker_ids: tuple[str, ...] | None = Field(
        default=None, description="Any of these speakers; an empty tuple matches nothing."
    )
    npc_id: Key | None = None
    npc_unknown: bool = Field(
        default=False,
        description="npc_id names no one the reader may know: searched as an id that no "
        "line holds, by the same statements, finding nothing.",
    )
    after: AwareDatetime | None = None
    before: AwareDatetime | None = None
    reader: Key | None = Field(
        default=None,
        description="The NPC reading (None: the DM): only the lines and passages it may read "
        "(glyphoxa_may_read, sql/032: not DM-only, and heard by it in a witnessed campaign).",
    )
    withheld_sessions: tuple[str, ...] = Field(
        default=(), description="Sessions whose lines and passages are left out."
    )


NO_FILTERS = SearchFilters()


# --- L2: semantic index -----------------------------------------------------------------------


def _finite(vector: list[float]) -> list[float]:
    if not vector:
        raise ValueError("must not be empty")
    # NumPy: a Python loop over every number cost more than storing the vector.
    if not np.isfinite(np.asarray(vector, dtype=np.float64)).all():
        raise ValueError("must contain only finite numbers")
    if not any(vector):
        raise ValueError("must not be all zeros (it has no direction to compare)")
    return vector


Embedding = Annotated[list[float], AfterValidator(_finite)]


def checked_embedding(
    values: Sequence[float], dimension: int, field: str = "embedding"
) -> list[float]:
    """A usable vector of the database's dimension, or an error that says what is wrong."""
    try:
        vector = _finite([float(x) for x in values])
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"The {field} {exc}.", field=field) from exc
    if len(vector) != dimension:
        raise InvalidInputError(
            f"The {field} has {len(vector)} dimensions; this database stores {dimension}. "
            "Use the embedding model the database was created with.",
            field=field,
        )
    return vector


class NewChunk(Frozen):
    session_id: Key | None = None
    content: Annotated[
        str,
        StringConstraints(max_length=MAX_CHUNK_CHARS),
        AfterValidator(_not_blank),
        AfterValidator(_no_control_characters),
    ]
    embedding: Embedding
    speaker_ids: tuple[str, ...] = ()
    npc_ids: tuple[Key, ...] = ()
    entity_ids: tuple[Key, ...] = ()
    topics: tuple[str, ...] = ()
    started_at: AwareDatetime | None = None
    ended_at: AwareDatetime | None = None
    entry_ids: tuple[int, ...] = ()


class Chunk(Frozen):
    id: int
    session_id: str | None
    content: str
    speaker_ids: tuple[str, ...]
    npc_ids: tuple[str, ...]
    entity_ids: tuple[str, ...]
    topics: tuple[str, ...]
    started_at: datetime | None
    ended_at: datetime | None
    entry_ids: tuple[int, ...]
    dm_only: bool = False


class ChunkMatch(Frozen):
    chunk: Chunk
    distance: float = Field(description="Cosine distance: 0 is identical, 2 is opposite.")


class ChunkTextMatch(Frozen):
    chunk: Chunk
    rank: float = Field(description="BM25 relevance to the query's words; higher is better.")


# --- L3: knowledge graph ----------------------------------------------------------------------


class Visibility(Frozen):
    """Who may know something: everyone, only `known_by`, or (secret with nobody) only the DM."""

    secret: bool = False
    known_by: tuple[Key, ...] = ()
    hearsay: tuple[tuple[Key, Key | None], ...] = Field(
        default=(),
        description="Of known_by, the NPCs who only heard of it, each with the NPC who told "
        "them (None: word going around), in a witnessed campaign (sql/032).",
    )

    def heard_of_by(self, npc_id: str | None) -> tuple[bool, str | None]:
        """Whether `npc_id` knows it only by word, and from whom."""
        for hearer, teller in self.hearsay:
            if hearer == npc_id:
                return True, teller
        return False, None


def narrowest(*visibilities: Visibility) -> Visibility:
    """Who may know a link between things of these visibilities: no one its ends hide from
    (those known by everyone add nothing; of the rest, only the NPCs every one names)."""
    restricted = [v for v in visibilities if v.secret or v.known_by]
    if not restricted:
        return Visibility()
    common = set(restricted[0].known_by).intersection(*(v.known_by for v in restricted[1:]))
    return Visibility(secret=True, known_by=tuple(sorted(common)))


class Provenance(Frozen):
    session_id: str | None = None
    timestamp: AwareDatetime = Field(default_factory=lambda: datetime.now(UTC))
    confidence: Confidence = 1.0
    source: Literal["stated", "inferred", "dm", "import"] = "dm"
    dm_confirmed: bool = False
    # The transcript line it was extracted from, as the model cited it. Stored in its own
    # column (a key into the lines, cleared when the line is forgotten), not in the JSON.
    entry_id: int | None = None


class NewEntity(Frozen):
    id: Key | None = Field(default=None, description="Derived from the name when absent.")
    type: EntityType
    name: Name
    aliases: tuple[Name, ...] = ()
    attributes: Attributes = Field(default_factory=dict)
    visibility: Visibility = Visibility()


class Entity(Frozen):
    id: str
    type: EntityType
    name: str
    aliases: tuple[str, ...]
    attributes: dict[str, Any]
    visibility: Visibility


class EntityLabel(Frozen):
    """What names an entity in a list: enough to show it and to ask for the rest."""

    id: str
    type: EntityType
    name: str


class NewRelationship(Frozen):
    source_id: Key
    target_id: Key
    rel_type: RelationshipType
    attributes: Attributes = Field(default_factory=dict)
    provenance: Provenance = Provenance()
    visibility: Visibility = Visibility()


class Relationship(Frozen):
    id: int
    source_id: str
    target_id: str
    rel_type: str
    attributes: dict[str, Any]
    provenance: Provenance
    visibility: Visibility


class NewFact(Frozen):
    subject_id: Key | None = None
    text: Annotated[
        str,
        StringConstraints(strip_whitespace=True, max_length=MAX_FACT_CHARS),
        AfterValidator(_not_blank),
        AfterValidator(_no_control_characters),
    ]
    session_id: Key | None = None
    story_day: float | None = Field(
        default=None, description="Day on the campaign's own calendar (day 1 = campaign start)."
    )
    story_label: Name | None = None
    occurred_at: AwareDatetime | None = None
    provenance: Provenance = Provenance()
    embedding: Embedding | None = None
    visibility: Visibility = Visibility()


class Fact(Frozen):
    id: int
    subject_id: str | None
    text: str
    session_id: str | None
    story_day: float | None
    story_label: str | None
    occurred_at: datetime | None
    provenance: Provenance
    visibility: Visibility
    superseded_by: int | None


class Neighbour(Frozen):
    """An entity reached by traversal, with the shortest path (entity ids) that reached it."""

    entity: Entity
    depth: int
    path: tuple[str, ...]
    via: str = Field(description="The relationship type of the path's last hop.")


class Subgraph(Frozen):
    entities: tuple[Entity, ...]
    relationships: tuple[Relationship, ...]
    facts: tuple[Fact, ...]


class RelatedEntity(Frozen):
    relationship: Relationship
    other: Entity
    direction: Literal["outgoing", "incoming"]


class IdentitySnapshot(Frozen):
    entity: Entity
    relationships: tuple[RelatedEntity, ...]
    facts: tuple[Fact, ...]


class ChunkInContext(Frozen):
    """A chunk found through the graph: the entities that tie it to the anchor."""

    match: ChunkMatch
    linked_entity_ids: tuple[str, ...]
    graph_distance: int


class FactMatch(Frozen):
    fact: Fact
    score: float
    graph_distance: int | None = None


def checked_query(query: str, field: str = "query") -> str:
    """A search query worth running, or an error that says what is wrong with it."""
    if not query.strip():
        raise InvalidInputError("The search query is blank.", field=field)
    if "\x00" in query:
        raise InvalidInputError("The search query contains a NUL character.", field=field)
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInputError(
            f"The search query has {len(query)} characters; the limit is {MAX_QUERY_CHARS}.",
            field=field,
        )
    return query


def build(model: type[M], /, **data: Any) -> M:
    """Construct `model`, turning validation failures into an error that names the field."""
    try:
        return model(**data)
    except ValidationError as exc:
        raise InvalidInputError(describe_validation_error(exc), field=_first_field(exc)) from exc


def describe_validation_error(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "value"
        problems.append(f"{field}: {rule_of(error)}")
    return "Invalid input: " + "; ".join(problems)


def _first_field(exc: ValidationError) -> str | None:
    errors = exc.errors()
    return ".".join(str(part) for part in errors[0]["loc"]) if errors else None
