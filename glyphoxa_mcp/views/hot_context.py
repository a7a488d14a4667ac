"""Assembling an NPC's hot context from the three layers, in that NPC's own scope."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field

from glyphoxa_mcp.concurrency import concurrently
from glyphoxa_mcp.domain.models import (
    Entity,
    Entry,
    IdentitySnapshot,
    Neighbour,
    SessionFact,
)
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.recall.hot_budgets import (
    HotBudgets,
    Line,
    Section,
    TranscriptLine,
    fit_by_relevance,
    fit_newest,
    render_prompt,
    section,
)
from glyphoxa_mcp.recall.names import match_names
from glyphoxa_mcp.recall.names_read import spoken
from glyphoxa_mcp.recall.redaction import Redactor
from glyphoxa_mcp.recall.relationship_sentences import seen_from
from glyphoxa_mcp.storage.graph_queries import NOT_IDENTITY
from glyphoxa_mcp.storage.lore_queries import LorePassage
from glyphoxa_mcp.views.arguments import quoted
from glyphoxa_mcp.views.reading import Reader, Reading
from glyphoxa_mcp.views.results import EntityRef
from glyphoxa_mcp.views.scope import Scope
from glyphoxa_mcp.views.session_summary import known_session

# Attributes that shape how an NPC talks and acts come first when the budget is tight.
CHARACTER_ATTRIBUTES = ("personality", "speaking_style", "occupation", "appearance", "goals")
ACTIVE_QUEST_STATES = ("active", "open", "in progress", "in_progress", "started")


class HotContext(BaseModel):
    npc: EntityRef
    session_id: str | None
    scope: str
    identity: Section
    scene: Section
    recent_transcript: Section
    session_facts: Section = Field(
        description="What holds for this session only (session_facts.set), newest last."
    )
    lore: Section = Field(
        description="The lore sections the DM pinned to this NPC (`lore pin`), first pinned first."
    )
    transcript: list[TranscriptLine]
    location: EntityRef | None
    present: list[EntityRef]
    active_quests: list[EntityRef]
    budgets: HotBudgets
    prompt: str
    degraded: bool = Field(
        default=False,
        description="True while memory is unavailable: this is the last context built, "
        "as it stood `age_s` seconds ago.",
    )
    age_s: float | None = Field(default=None, description="How old a degraded context is.")


@dataclass(frozen=True)
class NpcKnowledge:
    """What an NPC's hot context takes from the graph, as the NPC knows it: its snapshot and
    the identity section made from it, where it is and who is there, the active quests,
    the scene's lines about place and quests, the lore pinned to it, and the scope all of it
    was redacted in."""

    snapshot: IdentitySnapshot
    identity: Section
    location: Entity | None
    there: dict[str, Entity]
    quests: list[Entity]
    place_lines: list[Line]
    quest_lines: list[Line]
    lore_lines: list[Line]
    scope: Scope


def _ref(entity: Entity) -> EntityRef:
    return EntityRef(id=entity.id, name=entity.name, type=entity.type.value)


def _marks(secret: bool, unconfirmed: bool) -> str:
    marks = [m for m, on in (("secret", secret), ("rumour", unconfirmed)) if on]
    return f" ({', '.join(marks)})" if marks else ""


class HotLayer:
    """An NPC's hot context, built for `reader` (the NPC itself, or the DM): read as the NPC
    knows it, with the NPC's scope read once per build."""

    def __init__(self, reader: Reader, budgets: HotBudgets) -> None:
        self.reader = reader
        self.memory = reader.memory
        self.budgets = budgets

    def _speaks_for(self, npc_id: str) -> None:
        if self.reader.npc_id is not None and npc_id != self.reader.npc_id:
            raise InvalidInputError(
                f"This server speaks for {self.reader.npc_id!r}; it has no hot context for "
                f"npc_id {quoted(npc_id)}.",
                field="npc_id",
            )

    async def npc_entity(self, npc_id: str) -> Entity:
        self._speaks_for(npc_id)
        try:
            entity = await self.memory.graph.get_entity(npc_id)
        except NotFoundError:
            raise await self._unknown_npc(npc_id) from None
        return _an_npc(entity)

    async def _npc_snapshot(self, npc_id: str) -> IdentitySnapshot:
        """The NPC with what it knows of itself, its relationships and facts (which also
        holds its entity: not read a second time)."""
        try:
            snapshot = await self.memory.queries.identity_snapshot(
                npc_id, npc_id=npc_id, leaving_out=NOT_IDENTITY
            )
        except NotFoundError:
            raise await self._unknown_npc(npc_id) from None
        _an_npc(snapshot.entity)
        return snapshot

    async def _unknown_npc(self, npc_id: str) -> NotFoundError:
        near = match_names(npc_id, await self.memory.queries.entity_names(self.reader.npc_id), 3)
        hint = f" Did you mean {', '.join(m.entity.id for m in near)}?" if near else ""
        return NotFoundError(f"No NPC {quoted(npc_id)} (npc_id).{hint} glyphoxa://npcs lists them.")

    async def _session(self, session_id: str | None, withheld: frozenset[str]) -> str | None:
        """The session asked for, or the one being played, of those the NPC may read
        (`withheld`: the sessions it may not)."""
        if session_id is not None:
            await known_session(self.memory, session_id, withheld, field="session", npc=True)
            return session_id
        return await self.memory.log.latest_session_id(skipping=withheld)

    async def npc_knowledge(self, as_npc: Reading, withheld: frozenset[str]) -> NpcKnowledge:
        """What the NPC knows (`as_npc`: the NPC's reading, `withheld`: the sessions it may
        not read), kept until any of it changes (entities, relationships, facts): it is
        asked for at every turn of play, and reading a hub's relationships and facts and
        ranking them into the budget took most of building the hot context (16 of 25 ms
        for an NPC with 455 relationships and 132 facts)."""
        npc_id = as_npc.npc_id
        assert npc_id is not None
        key = ("hot context", npc_id, self.budgets.identity_tokens, self.reader.rumours)
        return await as_npc.knowledge_kept(
            key, lambda: self._read_knowledge(npc_id, as_npc.scope, withheld)
        )

    async def _read_knowledge(
        self, npc_id: str, scope: Scope, withheld: frozenset[str]
    ) -> NpcKnowledge:
        read = await self._npc_snapshot(npc_id)
        # The NPC always knows itself, whatever its name holds.
        snapshot = scope.shown_snapshot(read, withheld) or read.model_copy(
            update={"relationships": (), "facts": ()}
        )
        location = next(
            (
                r.other
                for r in snapshot.relationships
                if r.relationship.rel_type == "LOCATED_AT" and r.direction == "outgoing"
            ),
            None,
        )
        around, found_quests, pinned = await concurrently(
            lambda: self._around(location, npc_id),
            lambda: self.memory.graph.find_by_attribute(
                EntityType.QUEST, "status", ACTIVE_QUEST_STATES, npc_id=npc_id, limit=50
            ),
            lambda: self.memory.lore.pinned_for(npc_id),
        )
        quests = scope.shown_all(found_quests)
        redactor = scope.redactor
        description = redactor.clean(location.attributes).get("description") if location else None
        gives = {
            r.other.id for r in snapshot.relationships if r.relationship.rel_type == "QUEST_GIVER"
        }
        quest_lines = []
        for quest in quests:
            attributes = redactor.clean(quest.attributes)
            objective = attributes.get("objective") or attributes.get("description")
            detail = f" - {_text(objective)}" if objective else ""
            quest_lines.append(
                Line(f"Active quest: {quest.name}{detail}", 2.0 if quest.id in gives else 1.0)
            )
        return NpcKnowledge(
            snapshot=snapshot,
            identity=self._identity(snapshot, redactor),
            location=location,
            there={
                n.entity.id: n.entity
                for n in scope.shown_neighbours(around)
                if n.entity.type in (EntityType.NPC, EntityType.PLAYER)
            },
            quests=quests,
            place_lines=[Line(_text(description), 3.0)] if description else [],
            quest_lines=quest_lines,
            lore_lines=_lore_lines(pinned, redactor),
            scope=scope,
        )

    async def _recent_entries(
        self, session_id: str | None, npc_id: str, withheld: frozenset[str]
    ) -> tuple[str | None, list[Entry], list[SessionFact], Scene | None]:
        """The session (the latest when none is named), its last minutes of talk, the
        session facts shown to the NPC, and the scene being played when the NPC is in it."""
        session_id = await self._session(session_id, withheld)
        if session_id is None:
            return None, [], [], None
        window = timedelta(minutes=self.budgets.transcript_minutes)
        entries, facts, scenes = await concurrently(
            # The prompt of an NPC never holds what the DM keeps to themselves.
            lambda: self.memory.log.recent(session_id, window=window, reader=npc_id),
            lambda: self.memory.session_facts.shown_to(session_id, npc_id),
            lambda: self.memory.scenes.of_session(session_id, word_of=npc_id),
        )
        # The scene being played, when the NPC is in it: where it is and who is with it.
        current = scenes[-1] if scenes and npc_id in scenes[-1].present else None
        return session_id, entries, list(facts), current

    async def build(self, npc_id: str, session_id: str | None) -> HotContext:
        self._speaks_for(npc_id)
        as_npc = await self.reader.of_npc(npc_id).reading()
        withheld = await as_npc.withheld_sessions()
        known, (session_id, entries, facts, current) = await concurrently(
            lambda: self.npc_knowledge(as_npc, withheld),
            lambda: self._recent_entries(session_id, npc_id, withheld),
        )
        npc, identity = known.snapshot.entity, known.identity
        lines, speakers = _heard(entries, known.scope)
        transcript_lines, dropped = fit_newest(
            [f"{line.speaker}: {line.text}" for line in lines], self.budgets.transcript_tokens
        )
        transcript = section(
            "" if transcript_lines else "(nothing yet)",
            transcript_lines,
            self.budgets.transcript_tokens,
            dropped,
        )
        scene, present, location = self._scene(known, speakers, current)
        # A session fact naming someone hidden from the NPC is not shown to it.
        shown = [f.text for f in facts if not known.scope.redactor.mentions_hidden(f.text)]
        fact_lines, dropped_facts = fit_newest(shown, self.budgets.session_facts_tokens)
        session_facts = section("", fact_lines, self.budgets.session_facts_tokens, dropped_facts)
        lore_kept, lore_dropped = fit_by_relevance("", known.lore_lines, self.budgets.lore_tokens)
        lore = section("", lore_kept, self.budgets.lore_tokens, lore_dropped)
        return HotContext(
            npc=_ref(npc),
            session_id=session_id,
            scope=f"npc:{npc.id}",
            identity=identity,
            scene=scene,
            recent_transcript=transcript,
            session_facts=session_facts,
            lore=lore,
            transcript=lines[len(lines) - len(transcript_lines) :],
            location=_ref(location) if location else None,
            present=present,
            active_quests=[_ref(quest) for quest in known.quests],
            budgets=self.budgets,
            prompt=render_prompt(npc.name, identity, transcript, scene, session_facts, lore),
        )

    def _identity(self, snapshot: IdentitySnapshot, redactor: Redactor) -> Section:
        npc = snapshot.entity
        aliases = f" (also called {', '.join(npc.aliases)})" if npc.aliases else ""
        header = f"{npc.name}{aliases}{_marks(npc.visibility.secret, False)}"
        lines = [
            Line(
                f"{key.replace('_', ' ')}: {_text(value)}",
                3.0 if key in CHARACTER_ATTRIBUTES else 2.0,
            )
            for key, value in redactor.clean(npc.attributes).items()
        ]
        rumours = self.reader.rumours
        for related in snapshot.relationships:
            rel = related.relationship
            # What the NPC only heard of (word of a scene it was not at) is a rumour to it.
            unconfirmed = rumours.is_rumour(rel.provenance) or rel.visibility.heard_of_by(npc.id)[0]
            lines.append(
                Line(
                    seen_from(npc.name, related) + _marks(rel.visibility.secret, unconfirmed),
                    1.5 + rel.provenance.confidence,
                )
            )
        count = len(snapshot.facts)
        for position, fact in enumerate(snapshot.facts):
            unconfirmed = (
                rumours.is_rumour(fact.provenance) or fact.visibility.heard_of_by(npc.id)[0]
            )
            # Newer facts matter more; confident ones more than rumours.
            relevance = 1.0 + fact.provenance.confidence / 2 + position / max(count, 1) / 2
            lines.append(Line(fact.text + _marks(fact.visibility.secret, unconfirmed), relevance))
        kept, dropped = fit_by_relevance(header, lines, self.budgets.identity_tokens)
        return section(header, kept, self.budgets.identity_tokens, dropped)

    async def _around(self, location: Entity | None, npc_id: str) -> list[Neighbour]:
        """Who and what is at the NPC's location, as the NPC knows it."""
        if location is None:
            return []
        return await self.memory.queries.neighbours(
            location.id, npc_id=npc_id, rel_types=["LOCATED_AT"], limit=50
        )

    def _scene(
        self, known: NpcKnowledge, speaking_npcs: list[str], current: Scene | None
    ) -> tuple[Section, list[EntityRef], Entity | None]:
        """Where the NPC is and who is with it: the scene being played when it is in it (its
        place and those present, as far as the NPC may know them), else where it lives and
        who is around there."""
        by_id = known.scope.by_id
        location, place_lines = known.location, list(known.place_lines)
        present = dict(known.there)
        if current is not None:
            present = {i: by_id[i] for i in current.present if i in by_id}
            at = by_id.get(current.location_id) if current.location_id else None
            if at is not None and (location is None or at.id != location.id):
                location, place_lines = at, []  # its description is its home's
        for npc_id in speaking_npcs:
            if npc_id in by_id:
                present.setdefault(npc_id, by_id[npc_id])
        present.pop(known.snapshot.entity.id, None)
        lines = place_lines
        if present:
            lines.append(Line("Present: " + ", ".join(e.name for e in present.values()), 2.5))
        lines += known.quest_lines
        header = "Location: " + (location.name if location else "unknown")
        kept, dropped = fit_by_relevance(header, lines, self.budgets.scene_tokens)
        return (
            section(header, kept, self.budgets.scene_tokens, dropped),
            [_ref(e) for e in present.values()],
            location,
        )


def _heard(entries: list[Entry], scope: Scope) -> tuple[list[TranscriptLine], list[str]]:
    """The lines the NPC may hear, and the NPCs who spoke them."""
    lines = []
    speakers = []
    # Both lines go when a hidden name is split between them ("...the Salt" / "Knives").
    split = scope.redactor.split_names([entry.text for entry in entries])
    for entry, halved in zip(entries, split, strict=True):
        # A line by, or naming, someone hidden goes whole: no words without their speaker.
        if (
            halved
            or entry.npc_id in scope.hidden_ids
            or scope.redactor.mentions_hidden(spoken(entry.speaker_name, entry.text))
        ):
            continue
        if entry.npc_id:
            speakers.append(entry.npc_id)
        lines.append(
            TranscriptLine(speaker=entry.speaker_name, text=entry.text, spoken_at=entry.spoken_at)
        )
    return lines, speakers


def _lore_lines(pinned: list[LorePassage], redactor: Redactor) -> list[Line]:
    """The pinned pieces as lines of the prompt, each under its document and headings, in
    the order pinned. A piece under a title or heading naming something hidden from the NPC
    is left out; of the rest, the sentences naming something hidden."""
    lines = []
    for passage in pinned:
        place = " > ".join(p for p in (passage.document_title, passage.heading) if p)
        if redactor.mentions_hidden(place) or redactor.mentions_hidden(passage.document_id):
            continue
        text = redactor.redact(passage.text)
        if text.strip():
            lines.append(Line(f"[{place}] {text}", 1.0))
    return lines


def _an_npc(entity: Entity) -> Entity:
    if entity.type is not EntityType.NPC:
        raise InvalidInputError(
            f"npc_id {entity.id!r} is a {entity.type.value}, not an NPC.", field="npc_id"
        )
    return entity


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
