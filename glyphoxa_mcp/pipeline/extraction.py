"""Entity extraction with an LLM: what a session added to the campaign's knowledge.

The model reads the corrected transcript, a window at a time, with the known entities it
names, and answers in JSON with entities, relationships and facts, each with a confidence
and whether it was stated or inferred; a relationship or fact also cites the numbered line
that states it, stored as its source line when the number is one of the window's (a number
outside it is ignored, not an error). Every item is validated on its own (a bad item is
dropped, not the reply). Names are matched to known entities exactly, then by alias, then
by sound, then by the model's own `same_as`; only what matches nothing is new. Items at or
above the review threshold are written with their provenance; new entities below it wait
in the review queue, and weaker relationships and facts are stored as rumours there.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
)

from glyphoxa_mcp.correction.name_index import KnownName, NameIndex
from glyphoxa_mcp.correction.words import letters
from glyphoxa_mcp.domain.episodes import episode_id, session_of
from glyphoxa_mcp.domain.models import (
    Entity,
    Entry,
    NewEntity,
    NewFact,
    NewRelationship,
    Provenance,
)
from glyphoxa_mcp.domain.reports import ExtractionReport
from glyphoxa_mcp.domain.vocabulary import (
    RELATIONSHIP_TYPES,
    EntityType,
    checked_relationship_type,
    slugify,
)
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.providers.chat import ChatModel
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.storage.memory import CampaignMemory

log = logging.getLogger(__name__)
LINES_PER_REQUEST = 120
# A name that sounds this much like a known one is that entity, not a new one.
SAME_BY_SOUND = 0.85
SYSTEM_PROMPT = f"""\
You read one part of a tabletop RPG session transcript and list what it adds to the
campaign's knowledge. Use only what the transcript says or clearly implies; never invent.
Known entities are given with their ids: refer to them by name, and give "same_as" with the
id when a name you list is a known entity under another name.
Entity types: {", ".join(t.value for t in EntityType)}.
Relationship types: {", ".join(RELATIONSHIP_TYPES)} (or another UPPER_SNAKE verb).
Confidence is 0 to 1; basis is "stated" when the transcript says it, "inferred" otherwise.
Each transcript line starts with its number in brackets; "line" is the number of the line
that states a relationship or fact best (null when no single line does).
Reply with a JSON object:
{{"entities": [{{"name": "", "type": "", "aliases": [], "same_as": null, "confidence": 0.9,
"basis": "stated"}}],
"relationships": [{{"subject": "<name>", "type": "", "object": "<name>", "confidence": 0.9,
"basis": "stated", "line": 1}}],
"facts": [{{"subject": "<name or null>", "text": "<one sentence>", "confidence": 0.9,
"basis": "stated", "line": 1}}]}}"""


class _Item(BaseModel):
    confidence: float = Field(ge=0, le=1)
    basis: Literal["stated", "inferred"] = "stated"


class ExtractedEntity(_Item):
    name: str = Field(min_length=1, max_length=200)
    type: EntityType
    aliases: list[str] = Field(default_factory=list)
    same_as: str | None = None


class _Cited(_Item):
    # The number the request gave the line that states it; a wrong one is not worth the item.
    line: int | None = None

    @field_validator("line", mode="wrap")
    @classmethod
    def _any_wrong_number_is_none(
        cls, value: object, handler: ValidatorFunctionWrapHandler
    ) -> object:
        try:
            return handler(value)
        except ValidationError:
            return None


class ExtractedRelationship(_Cited):
    subject: str = Field(min_length=1)
    type: str = Field(min_length=1)
    object: str = Field(min_length=1)


class ExtractedFact(_Cited):
    subject: str | None = None
    text: str = Field(min_length=1, max_length=2000)


@dataclass
class Extraction:
    entities: list[ExtractedEntity] = field(default_factory=list)
    relationships: list[ExtractedRelationship] = field(default_factory=list)
    facts: list[ExtractedFact] = field(default_factory=list)
    dropped: int = 0


def parsed(reply: object) -> Extraction:
    """The reply's valid items; anything malformed is counted and dropped."""
    extraction = Extraction()
    if not isinstance(reply, dict):
        return extraction
    extraction.entities = _valid(reply.get("entities"), ExtractedEntity, extraction)
    extraction.relationships = _valid(reply.get("relationships"), ExtractedRelationship, extraction)
    extraction.facts = _valid(reply.get("facts"), ExtractedFact, extraction)
    return extraction


Item = TypeVar("Item", ExtractedEntity, ExtractedRelationship, ExtractedFact)


def _valid(items: object, model: type[Item], extraction: Extraction) -> list[Item]:
    """The items that are valid `model`s; the others are counted as dropped."""
    valid = []
    for item in items if isinstance(items, list) else []:
        try:
            valid.append(model.model_validate(item))
        except ValidationError:
            extraction.dropped += 1
    return valid


class EntityLinker:
    """Which entity a name in the model's reply means: exact, alias, by sound, same_as."""

    def __init__(self, known: Sequence[Entity]) -> None:
        self.by_id = {e.id: e for e in known}
        self._names: dict[str, str] = {}
        self._aliases: dict[str, str] = {}
        for entity in known:
            self._names.setdefault(letters(entity.name), entity.id)
            for alias in entity.aliases:
                self._aliases.setdefault(letters(alias), entity.id)
        self._index = NameIndex(
            KnownName(spelling, e.id) for e in known for spelling in (e.name, *e.aliases)
        )

    def resolve(self, name: str, same_as: str | None = None) -> str | None:
        key = letters(name)
        if key in self._names:
            return self._names[key]
        if key in self._aliases:
            return self._aliases[key]
        alike = self._index.similar(key, SAME_BY_SOUND)
        if alike:
            return alike[0][0].name.entity_id
        if same_as is not None and same_as in self.by_id:
            return same_as
        return None

    def add(self, entity: Entity) -> None:
        self.by_id[entity.id] = entity
        self._names.setdefault(letters(entity.name), entity.id)
        for alias in entity.aliases:
            self._aliases.setdefault(letters(alias), entity.id)


def cited_entry(item: _Cited, lines: Sequence[Entry]) -> int | None:
    """The id of the window's line the item cites by number; None when it cites none of them."""
    if item.line is None or not 1 <= item.line <= len(lines):
        return None
    return lines[item.line - 1].id


def windows(entries: Sequence[Entry], size: int = LINES_PER_REQUEST) -> list[Sequence[Entry]]:
    return [entries[i : i + size] for i in range(0, len(entries), size)]


def request(lines: Sequence[Entry], known: Sequence[Entity]) -> str:
    """The window's lines, numbered from 1 (`cited_entry` reads the numbers back), and the
    known entities they name or that speak in them."""
    transcript = "\n".join(
        f"[{number}] {e.speaker_name}: {e.text}" for number, e in enumerate(lines, start=1)
    )
    named = NamePattern.of_entities(known).owners_in(transcript)
    speakers = {e.npc_id for e in lines if e.npc_id}
    by_id = {e.id: e for e in known}
    listed = [by_id[i] for i in dict.fromkeys([*named, *sorted(speakers)]) if i in by_id]
    return json.dumps(
        {
            "known_entities": [
                {"id": e.id, "name": e.name, "type": e.type.value, "aliases": list(e.aliases)}
                for e in listed
            ],
            "transcript": transcript,
        },
        ensure_ascii=False,
    )


async def _keep_to_its_witnesses(memory: CampaignMemory, session_id: str) -> None:
    """What the session taught so far: the DM's alone in a DM-only session; in a witnessed
    campaign, known to those who were there (and whom word reached)."""
    if (await memory.sessions.get(session_id)).dm_only:
        await memory.curation.hide_learned_in(session_id, episode_id(session_id))
    await memory.curation.teach_witnessed(session_id)


async def extract_session(
    memory: CampaignMemory,
    chat: ChatModel,
    session_id: str,
    entries: Sequence[Entry],
    threshold: float,
    *,
    embedder: Embedder | None = None,
) -> ExtractionReport:
    """Ask the model about each window of `entries` and store what it found; each window's
    lines are marked as read once stored, so a run cut short (or an unreachable LLM) leaves
    the rest for the next. With an `embedder`, each window's facts are embedded once stored
    (or left for the backfill when it fails)."""
    known = [e for e in await memory.queries.entity_names() if session_of(e) is None]
    linker = EntityLinker(known)
    added: list[str] = []
    held: list[str] = []
    mentioned: list[str] = []
    relationships = facts = dropped = 0
    spoken = max((e.spoken_at for e in entries), default=None)
    for lines in windows(entries):
        extraction = parsed(await chat.json_reply(SYSTEM_PROMPT, request(lines, known)))
        dropped += extraction.dropped
        for item in extraction.entities:
            entity_id = linker.resolve(item.name, item.same_as)
            if entity_id is not None:
                mentioned.append(entity_id)
                continue
            new = NewEntity(
                id=_free_id(slugify(item.name), linker),
                type=item.type,
                name=item.name.strip(),
                aliases=tuple(a.strip() for a in item.aliases if a.strip()),
            )
            if item.confidence >= threshold:
                stored = await memory.graph.upsert_entity(new)
                linker.add(stored)
                added.append(stored.id)
                mentioned.append(stored.id)
            else:
                await memory.pending.propose("session", f"{session_id}:{new.id}", new)
                held.append(new.id or item.name)

        for rel in extraction.relationships:
            subject, target = linker.resolve(rel.subject), linker.resolve(rel.object)
            try:
                rel_type = checked_relationship_type(rel.type, "type")
            except InvalidInputError:
                rel_type = None
            if subject is None or target is None or rel_type is None or subject == target:
                dropped += 1
                continue
            await memory.graph.propose_relationship(
                NewRelationship(
                    source_id=subject,
                    target_id=target,
                    rel_type=rel_type,
                    provenance=_provenance(rel, session_id, cited_entry(rel, lines)),
                )
            )
            relationships += 1
        for fact in extraction.facts:
            subject_id = linker.resolve(fact.subject) if fact.subject else None
            if fact.subject and subject_id is None:
                dropped += 1
                continue
            kept = await memory.graph.propose_fact(
                NewFact(
                    subject_id=subject_id,
                    text=fact.text,
                    session_id=session_id,
                    occurred_at=spoken,
                    provenance=_provenance(fact, session_id, cited_entry(fact, lines)),
                )
            )
            facts += kept is not None  # None: the DM retconned this statement away
        # Each window's learning is kept to whom it may reach before anything else is
        # asked for (its embedding, the next window): a provider failing or slow then
        # leaves nothing of it public meanwhile.
        await _keep_to_its_witnesses(memory, session_id)
        await memory.log.mark_extracted([e.id for e in lines])
        await embed_new(memory.db, embedder, memory.campaign_id)
    if not entries:
        # No window to read: what was learned in the session otherwise is taught now.
        await _keep_to_its_witnesses(memory, session_id)
    if dropped:
        log.info(
            "Extraction for session %s dropped %d malformed or unresolvable items.",
            session_id,
            dropped,
        )
    return ExtractionReport(
        tuple(added),
        tuple(held),
        relationships,
        facts,
        dropped,
        tuple(dict.fromkeys(mentioned)),
    )


def _provenance(item: _Item, session_id: str, entry_id: int | None) -> Provenance:
    return Provenance(
        session_id=session_id, confidence=item.confidence, source=item.basis, entry_id=entry_id
    )


def _free_id(slug: str, linker: EntityLinker) -> str:
    """The slug, or slug-2, -3... when another entity has it already."""
    candidate, number = slug, 2
    while candidate in linker.by_id:
        candidate, number = f"{slug}-{number}", number + 1
    return candidate
