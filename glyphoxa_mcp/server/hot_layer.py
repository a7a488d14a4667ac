"""Assembling an NPC's hot context from the three layers, in that NPC's own scope."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from glyphoxa_mcp.concurrency import concurrently
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.recall.hot_context import (
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
from glyphoxa_mcp.recall.redaction import Redactor
from glyphoxa_mcp.recall.sentences import seen_from
from glyphoxa_mcp.server.results import EntityRef
from glyphoxa_mcp.server.state import Scope, ServerState, scope_of
from glyphoxa_mcp.storage.models import Entity, IdentitySnapshot, Neighbour
from glyphoxa_mcp.storage.vocabulary import EntityType

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
    transcript: list[TranscriptLine]
    location: EntityRef | None
    present: list[EntityRef]
    active_quests: list[EntityRef]
    budgets: HotBudgets
    prompt: str


def _ref(entity: Entity) -> EntityRef:
    return EntityRef(id=entity.id, name=entity.name, type=entity.type.value)


def _marks(secret: bool, unconfirmed: bool) -> str:
    marks = [m for m, on in (("secret", secret), ("rumour", unconfirmed)) if on]
    return f" ({', '.join(marks)})" if marks else ""


class HotLayer:
    def __init__(self, state: ServerState, budgets: HotBudgets) -> None:
        self.state = state
        self.memory = state.memory
        self.budgets = budgets

    def _speaks_for(self, npc_id: str) -> None:
        if self.state.npc_id is not None and npc_id != self.state.npc_id:
            raise InvalidInputError(
                f"This server speaks for {self.state.npc_id!r}; it has no hot context for "
                f"{npc_id!r}.",
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
            snapshot = await self.memory.queries.identity_snapshot(npc_id, npc_id=npc_id)
        except NotFoundError:
            raise await self._unknown_npc(npc_id) from None
        _an_npc(snapshot.entity)
        return snapshot

    async def _unknown_npc(self, npc_id: str) -> NotFoundError:
        near = match_names(npc_id, await self.memory.queries.entity_names(self.state.npc_id), 3)
        hint = f" Did you mean {', '.join(m.entity.id for m in near)}?" if near else ""
        return NotFoundError(f"No NPC {npc_id!r}.{hint} glyphoxa://npcs lists them.")

    async def _session(self, session_id: str | None) -> str | None:
        if session_id is not None:
            await self.memory.sessions.get(session_id)
            return session_id
        return await self.memory.log.latest_session_id()

    async def build(self, npc_id: str, session_id: str | None) -> HotContext:
        self._speaks_for(npc_id)
        # Independent reads side by side; should several fail, the NPC's own error wins, as
        # when they ran in this order one after another.
        snapshot, session_id, scope = await concurrently(
            lambda: self._npc_snapshot(npc_id),
            lambda: self._session(session_id),
            lambda: scope_of(self.memory, npc_id),
        )
        npc = snapshot.entity
        identity = self._identity(snapshot, scope.redactor)
        location = next(
            (
                r.other
                for r in snapshot.relationships
                if r.relationship.rel_type == "LOCATED_AT" and r.direction == "outgoing"
            ),
            None,
        )
        (lines, speakers), around, quests = await concurrently(
            lambda: self._transcript(session_id, scope),
            lambda: self._around(location, npc.id),
            lambda: self.memory.graph.find_by_attribute(
                EntityType.QUEST, "status", ACTIVE_QUEST_STATES, npc_id=npc.id, limit=50
            ),
        )
        transcript_lines, dropped = fit_newest(
            [f"{line.speaker}: {line.text}" for line in lines], self.budgets.transcript_tokens
        )
        transcript = section(
            "" if transcript_lines else "(nothing yet)",
            transcript_lines,
            self.budgets.transcript_tokens,
            dropped,
        )
        scene, present, active = self._scene(snapshot, location, around, quests, speakers, scope)
        return HotContext(
            npc=_ref(npc),
            session_id=session_id,
            scope=f"npc:{npc.id}",
            identity=identity,
            scene=scene,
            recent_transcript=transcript,
            transcript=lines[len(lines) - len(transcript_lines) :],
            location=_ref(location) if location else None,
            present=present,
            active_quests=active,
            budgets=self.budgets,
            prompt=render_prompt(npc.name, identity, transcript, scene),
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
        threshold = self.state.review_threshold
        for related in snapshot.relationships:
            rel = related.relationship
            unconfirmed = rel.provenance.confidence < threshold and not rel.provenance.dm_confirmed
            lines.append(
                Line(
                    seen_from(npc.name, related) + _marks(rel.visibility.secret, unconfirmed),
                    1.5 + rel.provenance.confidence,
                )
            )
        count = len(snapshot.facts)
        for position, fact in enumerate(snapshot.facts):
            if redactor.mentions_hidden(fact.text):
                continue
            unconfirmed = (
                fact.provenance.confidence < threshold and not fact.provenance.dm_confirmed
            )
            # Newer facts matter more; confident ones more than rumours.
            relevance = 1.0 + fact.provenance.confidence / 2 + position / max(count, 1) / 2
            lines.append(Line(fact.text + _marks(fact.visibility.secret, unconfirmed), relevance))
        kept, dropped = fit_by_relevance(header, lines, self.budgets.identity_tokens)
        return section(header, kept, self.budgets.identity_tokens, dropped)

    async def _transcript(
        self, session_id: str | None, scope: Scope
    ) -> tuple[list[TranscriptLine], list[str]]:
        if session_id is None:
            return [], []
        window = timedelta(minutes=self.budgets.transcript_minutes)
        entries = await self.memory.log.recent(session_id, window=window)
        lines = []
        heard = []
        for entry in entries:
            # A line by, or naming, someone hidden goes whole: no words without their speaker.
            if entry.npc_id in scope.hidden_ids or scope.redactor.mentions_hidden(
                f"{entry.speaker_name}: {entry.text}"
            ):
                continue
            heard.append(entry)
            lines.append(
                TranscriptLine(
                    speaker=entry.speaker_name, text=entry.text, spoken_at=entry.spoken_at
                )
            )
        speakers = [e.npc_id for e in heard if e.npc_id]
        return lines, speakers

    async def _around(self, location: Entity | None, npc_id: str) -> list[Neighbour]:
        """Who and what is at the NPC's location, as the NPC knows it."""
        if location is None:
            return []
        return await self.memory.queries.neighbours(
            location.id, npc_id=npc_id, rel_types=["LOCATED_AT"], limit=50
        )

    def _scene(
        self,
        snapshot: IdentitySnapshot,
        location: Entity | None,
        around: list[Neighbour],
        quests: list[Entity],
        speaking_npcs: list[str],
        scope: Scope,
    ) -> tuple[Section, list[EntityRef], list[EntityRef]]:
        redactor = scope.redactor
        npc = snapshot.entity
        present: dict[str, Entity] = {}
        for neighbour in around:
            if neighbour.entity.type in (EntityType.NPC, EntityType.PLAYER):
                present[neighbour.entity.id] = neighbour.entity
        known = scope.by_id
        for npc_id in speaking_npcs:
            if npc_id in known:
                present.setdefault(npc_id, known[npc_id])
        present.pop(npc.id, None)
        gives = {
            r.other.id for r in snapshot.relationships if r.relationship.rel_type == "QUEST_GIVER"
        }
        lines: list[Line] = []
        header = "Location: " + (location.name if location else "unknown")
        description = redactor.clean(location.attributes).get("description") if location else None
        if description:
            lines.append(Line(_text(description), 3.0))
        if present:
            lines.append(Line("Present: " + ", ".join(e.name for e in present.values()), 2.5))
        for quest in quests:
            attributes = redactor.clean(quest.attributes)
            objective = attributes.get("objective") or attributes.get("description")
            detail = f" - {_text(objective)}" if objective else ""
            lines.append(
                Line(f"Active quest: {quest.name}{detail}", 2.0 if quest.id in gives else 1.0)
            )
        kept, dropped = fit_by_relevance(header, lines, self.budgets.scene_tokens)
        return (
            section(header, kept, self.budgets.scene_tokens, dropped),
            [_ref(e) for e in present.values()],
            [_ref(q) for q in quests],
        )


def _an_npc(entity: Entity) -> Entity:
    if entity.type is not EntityType.NPC:
        raise InvalidInputError(f"{entity.id!r} is a {entity.type.value}, not an NPC.")
    return entity


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
