"""Keeping an open session searchable while it is played.

After lines arrive, the session's passages are cut again and the new ones embedded and
stored (a line is searchable seconds after it was said, without anyone running `process`).
With an LLM, extraction reads the lines of each finished scene (or every
`EXTRACT_EVERY` lines of a long one) in a task of its own, so a slow model never holds up
the index. Failures (the database's, a provider's, or one nobody expected, such as the
driver confused by a restart) are logged once per run of failures and retried with backoff;
`session end` finishes whatever is left either way.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio

from glyphoxa_mcp.backoff import Backoff
from glyphoxa_mcp.domain.models import Entry
from glyphoxa_mcp.errors import GlyphoxaError
from glyphoxa_mcp.pipeline.chunking import DEFAULT_POLICY, ChunkingPolicy, scenes
from glyphoxa_mcp.pipeline.extraction import extract_session
from glyphoxa_mcp.pipeline.process import index_passages
from glyphoxa_mcp.providers.chat import ChatModel
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.recording_leases import recording_lease
from glyphoxa_mcp.supervision import FailureStreak

log = logging.getLogger(__name__)
# A scene that goes on and on is still read by the LLM in parts of this many lines.
EXTRACT_EVERY = 60
# An indexer with nothing to do for this long stops; the next line starts it again.
IDLE_S = 600.0
# After a failure (database or provider), wait before trying again: 0.5 s (the supervisor's
# first retry too), doubling to 30 s.
RETRY_S = 0.5
RETRY_LONGEST_S = 30.0


def ready_for_extraction(
    unread: Sequence[Entry], policy: ChunkingPolicy = DEFAULT_POLICY, every: int = EXTRACT_EVERY
) -> list[Entry]:
    """The lines (in spoken order, none read yet) that extraction should read now: those of
    every scene a pause has closed, and the open scene's once it holds `every` lines; never
    a line the DM keeps to themselves, as what extraction learns every NPC may read. (pure)"""
    groups = scenes([entry for entry in unread if not entry.dm_only], policy.scene_break)
    if groups and len(groups[-1]) < every:
        groups.pop()
    return [entry for group in groups for entry in group]


class LiveIndexer:
    """One open session's background work, run by `run` in the recorder's task group."""

    def __init__(
        self,
        memory: CampaignMemory,
        embedder: Embedder,
        session_id: str,
        chat: ChatModel | None = None,
        policy: ChunkingPolicy = DEFAULT_POLICY,
    ) -> None:
        self.memory = memory
        self.embedder = embedder
        self.session_id = session_id
        self.chat = chat
        self.policy = policy
        self._index_wanted = anyio.Event()
        self._extract_wanted = anyio.Event()
        # Pokes received, and the pokes the last finished catch-up covered.
        self._poked = 0
        self._indexed = 0
        self._progress = anyio.Event()
        self.running = True
        self._cancel = anyio.CancelScope()

    def poke(self) -> None:
        """New lines: index them soon."""
        self._poked += 1
        self._index_wanted.set()

    async def caught_up(self) -> None:
        """Wait until every line poked so far is in the index (or the indexer stopped)."""
        target = self._poked
        while self.running and self._indexed < target:
            await self._progress.wait()

    def stop(self) -> None:
        self._cancel.cancel()

    async def run(self) -> None:
        """Until stopped, or idle for `IDLE_S`. Meanwhile the session is being recorded into:
        deleting it, a line of it or its campaign is refused (storage/recording_leases.py)."""
        memory = self.memory
        try:
            with self._cancel:
                async with (
                    recording_lease(memory.db, memory.campaign_id, self.session_id),
                    anyio.create_task_group() as tasks,
                ):
                    if self.chat is not None:
                        tasks.start_soon(self._extracting, self.chat)
                    await self._indexing()
                    tasks.cancel_scope.cancel()
        except GlyphoxaError as exc:  # the lease could not be taken; the next line tries again
            log.warning("session %s: live indexing not started (%s)", self.session_id, exc)
        except Exception:  # contained: a background task must not take the server down
            log.exception(
                "session %s: live indexing stopped; the next line starts it again", self.session_id
            )
        finally:
            self.running = False
            self._progress.set()

    async def _indexing(self) -> None:
        failures = FailureStreak(f"indexing session {self.session_id}", expected=(GlyphoxaError,))
        backoff = Backoff(RETRY_S, RETRY_LONGEST_S)
        while True:
            with anyio.move_on_after(IDLE_S):
                await self._index_wanted.wait()
            if not self._index_wanted.is_set():
                log.info("session %s: no new lines for a while; indexer stopped", self.session_id)
                return
            self._index_wanted = anyio.Event()
            covers = self._poked
            try:
                await self.catch_up()
            except Exception as exc:  # retried, whatever it was
                failures.failed(exc)
                await anyio.sleep(backoff.next())
                self._index_wanted.set()
                continue
            failures.succeeded()
            backoff.reset()
            self._indexed = covers
            self._progress.set()
            self._progress = anyio.Event()
            self._extract_wanted.set()

    async def catch_up(self) -> None:
        entries = await self.memory.log.entries(self.session_id)
        await index_passages(self.memory, self.embedder, self.session_id, entries, self.policy)

    async def _extracting(self, chat: ChatModel) -> None:
        failures = FailureStreak(
            f"extraction during play of session {self.session_id} (tried again with the next "
            "lines and at session end)",
            expected=(GlyphoxaError,),
        )
        while True:
            await self._extract_wanted.wait()
            self._extract_wanted = anyio.Event()
            try:
                lines = ready_for_extraction(
                    await self.memory.log.unextracted(self.session_id), self.policy
                )
                if lines:
                    threshold = (await self.memory.campaign()).review_threshold
                    report = await extract_session(
                        self.memory,
                        chat,
                        self.session_id,
                        lines,
                        threshold,
                        embedder=self.embedder,
                    )
                    log.info(
                        "session %s: extracted %d lines during play (%d entities, %d "
                        "relationships, %d facts)",
                        self.session_id,
                        len(lines),
                        len(report.entities_added),
                        report.relationships,
                        report.facts,
                    )
            except Exception as exc:  # tried again with the next lines, whatever it was
                failures.failed(exc)
            else:
                failures.succeeded()
