"""The recorder: what a voice bridge (over the recorder endpoint) or a DM's terminal (`record`)
does to a session while it is played.

Every call is one transaction: an append stores all of its utterances or none. Every call
runs on the database's write lane (`Database.writes`) within the write deadline, and one that
is not confirmed by then is answered `UnconfirmedWriteError`: not stored (or, its commit sent
and unanswered, maybe stored), naming what to resend. Misheard
campaign names are put back before a line is stored (the phonetic stage), so the hot context
and every search see them right from the first moment. Each open session gets a
`LiveIndexer` in the recorder's task group; ending a session stops it and runs `session end`
in the background.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

import anyio
from anyio.abc import TaskGroup
from pydantic import BaseModel, Field

from glyphoxa_mcp.app import App
from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS, CorrectorCache
from glyphoxa_mcp.correction.spans import apply_corrections, phonetic_spans
from glyphoxa_mcp.db.write_deadline import WriteProgress, write_within
from glyphoxa_mcp.domain.models import Entry, NewSession, Session, SessionFact, build
from glyphoxa_mcp.domain.scenes import Scene, SceneMarker
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import GlyphoxaError, InvalidInputError, NotFoundError
from glyphoxa_mcp.pipeline.finish import end_session
from glyphoxa_mcp.pipeline.scene_markers import resolved_scene
from glyphoxa_mcp.recall.entity_resolver import EntityResolver
from glyphoxa_mcp.recording.live_index import LiveIndexer
from glyphoxa_mcp.recording.utterances import (
    MAX_UTTERANCES_PER_CALL,
    RecordedUtterance,
    SpokenUtterance,
    recorded_as,
)
from glyphoxa_mcp.storage.memory import CampaignMemory

log = logging.getLogger(__name__)


class EndState(BaseModel):
    """How far ending a session has got, and nothing of what ending it found: a recorder
    reads nothing, and the session may be the DM's own (who took part, how it was
    summarised and why it failed stay in the server's log and the DM's tools)."""

    session_id: str
    state: Literal["ending", "ended", "failed"] = Field(
        description="ending: under way (call again, or wait); ended: done; failed: call "
        "session.end again to retry."
    )


@dataclass
class Ending:
    state: EndState
    done: anyio.Event = field(default_factory=anyio.Event)


# A resend error names at most this many utterances by id, then how many more.
NAMED_IN_RESEND = 10


def resend_utterances(utterances: Sequence[SpokenUtterance]) -> str:
    """What to send again, for a writer told an append was not confirmed: the call's
    utterances (all or none were stored) by id, and why sending them again is safe."""
    ids = [u.utterance_id for u in utterances if u.utterance_id is not None]
    unnamed = len(utterances) - len(ids)
    if not ids:
        which = "this utterance" if unnamed == 1 else f"all {unnamed} utterances of this call"
        return f"{which} (the same timestamp, speaker and words make a resend safe)"
    named = ", ".join(ids[:NAMED_IN_RESEND])
    more = len(ids) - NAMED_IN_RESEND
    if more > 0:
        named += f" and {more} more"
    if unnamed:
        named += f", and {unnamed} without an id (same timestamp, speaker and words)"
    word = "utterance" if len(utterances) == 1 else "utterances"
    why = "its utterance_id makes" if len(ids) == 1 else "their utterance_id makes"
    return f"{word} {named} ({why} a resend safe)"


class Recorder:
    """Records sessions of any campaign on the write lane; background work runs in `tasks`."""

    def __init__(
        self,
        app: App,
        tasks: TaskGroup,
        correctors: CorrectorCache = SHARED_CORRECTORS,
        *,
        write_deadline_ms: int | None = None,
    ) -> None:
        """`write_deadline_ms` None: the app's setting (`--write-deadline-ms`)."""
        self.app = app
        self.db = app.db.writes
        self.write_deadline_s = (write_deadline_ms or app.settings.write_deadline_ms) / 1000
        # The campaigns' memories over the write lane (the app's own serve the readers).
        self._memories: dict[str, CampaignMemory] = {}
        self._tasks = tasks
        self._correctors = correctors
        self._indexers: dict[tuple[str, str], LiveIndexer] = {}
        self._endings: dict[tuple[str, str], Ending] = {}

    def memory_of(self, campaign: str) -> CampaignMemory:
        """The campaign's memory on the write lane, one per campaign for the recorder's life."""
        memory = self._memories.get(campaign)
        if memory is None:
            memory = self._memories[campaign] = (
                self.app.memory(campaign)
                if self.db is self.app.db
                else CampaignMemory(self.db, campaign)
            )
        return memory

    async def start(
        self,
        campaign: str,
        session_id: str,
        *,
        title: str | None = None,
        started_at: datetime | None = None,
    ) -> bool:
        """Open the session (or fill in a title or an earlier start of an existing one);
        whether it is new. It starts at `started_at`, or now when that is left out (a
        session already started keeps its earlier start). Nothing stored is read back: a
        recorder reads nothing."""
        memory = self.memory_of(campaign)
        session = build(
            NewSession,
            id=session_id,
            title=title,
            started_at=started_at or datetime.now(UTC),
        )

        async def write(progress: WriteProgress) -> bool:
            progress.commit_sent = True  # one statement: sent is maybe committed
            return await memory.sessions.open(session)

        return await write_within(
            self.db,
            self.write_deadline_s,
            write,
            resend=f"session.start for {session_id!r} (starting it again is safe)",
        )

    async def append(
        self, campaign: str, session_id: str, utterances: Sequence[SpokenUtterance]
    ) -> list[RecordedUtterance]:
        """Store the utterances (one transaction), names put back; for each, in order, what
        was stored, or, for one stored before, only that it was."""
        if not utterances:
            raise InvalidInputError("Give at least one utterance.", field="utterances")
        if len(utterances) > MAX_UTTERANCES_PER_CALL:
            raise InvalidInputError(
                f"At most {MAX_UTTERANCES_PER_CALL} utterances per call; got {len(utterances)}.",
                field="utterances",
            )
        memory = self.memory_of(campaign)

        async def write(progress: WriteProgress) -> list[tuple[Entry, bool]]:
            session = await self._session(memory, session_id)
            # A line said before the session's start (a bridge's clock behind the server's,
            # a log replayed) moves the start back: a session never ends before it starts.
            earliest = min(utterance.timestamp for utterance in utterances)
            if session.started_at is None or earliest < session.started_at:
                await memory.sessions.upsert(build(NewSession, id=session_id, started_at=earliest))
            corrector = self._correctors.for_entities(await memory.known_entities())
            entries = []
            for utterance in utterances:
                spans = phonetic_spans(corrector.correct(utterance.text))
                entries.append(utterance.entry(apply_corrections(utterance.text, spans), spans))
            return await memory.log.record(session_id, entries, progress)

        stored = await write_within(
            self.db, self.write_deadline_s, write, resend=resend_utterances(utterances)
        )
        if any(new for _, new in stored):
            self._indexer(memory, session_id).poke()
        return [
            recorded_as(entry, utterance.utterance_id, new)
            for (entry, new), utterance in zip(stored, utterances, strict=True)
        ]

    async def searchable(self, campaign: str, session_id: str) -> None:
        """Wait until every line appended so far is in the semantic index."""
        indexer = self._indexers.get((campaign, session_id))
        if indexer is not None:
            await indexer.caught_up()

    async def end(
        self,
        campaign: str,
        session_id: str,
        *,
        on_done: Callable[[EndState], Awaitable[None]] | None = None,
    ) -> Ending:
        """Stop the session's live work and end it in the background (as `session end`
        does); asking again while it runs returns the same ending. Its state says how far it
        got and nothing of what it found (that goes to the server's log)."""
        memory = self.memory_of(campaign)

        async def check(_progress: WriteProgress) -> Session:
            return await self._session(memory, session_id)

        await write_within(
            self.db,
            self.write_deadline_s,
            check,
            resend=f"session.end for {session_id!r} (calling it again is safe)",
        )
        key = (campaign, session_id)
        running = self._endings.get(key)
        if running is not None and running.state.state == "ending":
            return running
        ending = self._endings[key] = Ending(EndState(session_id=session_id, state="ending"))
        indexer = self._indexers.pop(key, None)
        if indexer is not None:
            indexer.stop()

        async def finish() -> None:
            try:
                report = await end_session(
                    self.db, campaign, session_id, self.app.embedder, chat=self.app.chat
                )
                log.info(
                    "session %s of %s ended (%s summary%s)",
                    session_id,
                    campaign,
                    report.summary_source,
                    f"; LLM unreachable: {report.llm_unreachable}"
                    if report.llm_unreachable
                    else "",
                )
                ending.state = EndState(session_id=session_id, state="ended")
            except GlyphoxaError as exc:
                log.warning("ending session %s of %s failed: %s", session_id, campaign, exc)
                ending.state = EndState(session_id=session_id, state="failed")
            ending.done.set()
            if on_done is not None:
                await on_done(ending.state)

        self._tasks.start_soon(finish)
        return ending

    async def set_fact(
        self, campaign: str, session_id: str, key: str, text: str, npc_id: str | None
    ) -> SessionFact:
        memory = self.memory_of(campaign)

        async def write(progress: WriteProgress) -> SessionFact:
            await self._session(memory, session_id)
            if npc_id is not None:
                await self._npc(memory, npc_id)
            progress.commit_sent = True  # one statement: sent is maybe committed
            return await memory.session_facts.set(session_id, key, text, npc_id)

        return await write_within(
            self.db,
            self.write_deadline_s,
            write,
            resend=f"session_facts.set for {key!r} (setting it again is safe)",
        )

    async def set_scene(
        self, campaign: str, session_id: str, marker: SceneMarker, at: datetime | None = None
    ) -> Scene:
        """Start a scene of the session at `at` (now when None): where, and the NPCs present
        (the players always are). Setting a scene at the same time again replaces it. A name
        that names no NPC (or location) of the campaign is refused alike, whatever else it
        names: a recorder reads nothing."""
        memory = self.memory_of(campaign)
        started_at = at or datetime.now(UTC)

        async def write(progress: WriteProgress) -> Scene:
            await self._session(memory, session_id)
            resolver = EntityResolver(await memory.known_entities())
            scene = resolved_scene(session_id, started_at, marker, resolver, quiet=True)
            progress.commit_sent = True  # one transaction: sent is maybe committed
            await memory.scenes.record([scene])
            return scene

        return await write_within(
            self.db,
            self.write_deadline_s,
            write,
            resend=f"scene.set for session {session_id!r} at {started_at.isoformat()} "
            "(setting it again at the same time is safe)",
        )

    async def clear_facts(self, campaign: str, session_id: str, key: str | None) -> None:
        """Remove the fact `key` of the session, or (None) all of them. Nothing is read back,
        not even whether there was such a fact: a recorder reads nothing, and the facts may
        be the DM's. Clearing what is not there is done already."""
        memory = self.memory_of(campaign)

        async def write(progress: WriteProgress) -> None:
            await self._session(memory, session_id)
            progress.commit_sent = True  # one statement: sent is maybe committed
            await memory.session_facts.clear(session_id, key)

        what = "every fact" if key is None else repr(key)
        await write_within(
            self.db,
            self.write_deadline_s,
            write,
            resend=f"session_facts.clear for {what} (clearing again is safe)",
        )

    def _indexer(self, memory: CampaignMemory, session_id: str) -> LiveIndexer:
        key = (memory.campaign_id, session_id)
        indexer = self._indexers.get(key)
        if indexer is None or not indexer.running:
            indexer = LiveIndexer(memory, self.app.embedder, session_id, self.app.chat)
            self._indexers[key] = indexer

            async def run() -> None:
                await indexer.run()
                if self._indexers.get(key) is indexer:
                    del self._indexers[key]

            self._tasks.start_soon(run)
        return indexer

    async def _session(self, memory: CampaignMemory, session_id: str) -> Session:
        try:
            return await memory.sessions.get(session_id)
        except NotFoundError:
            raise NotFoundError(
                f"session_id: no session {session_id!r} in this campaign; start it first "
                "(session.start)."
            ) from None

    async def _npc(self, memory: CampaignMemory, npc_id: str) -> None:
        try:
            entity = await memory.graph.get_entity(npc_id)
        except NotFoundError:
            entity = None
        if entity is None or entity.type is not EntityType.NPC:
            raise InvalidInputError(
                f"No NPC {npc_id!r} in this campaign; leave npc_id out to show the fact to "
                "every NPC.",
                field="npc_id",
            )
