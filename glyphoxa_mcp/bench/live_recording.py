"""Live recording: how soon a line appended through the recorder reaches an NPC.

A session already hundreds of lines long (ingested and processed first) gets one line at a
time through the `Recorder`, as a voice bridge sends them. For each line: the append call
itself; append -> the hot-context notification a subscribed NPC hears (through PostgreSQL's
change feed, as `serve` delivers it); append -> found by a word search of the semantic
index (the background indexer's work, without anyone running `process`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta

import anyio
from pydantic import BaseModel

from glyphoxa_mcp.app import App
from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID
from glyphoxa_mcp.bench.ingestion import SESSION_PREFIX
from glyphoxa_mcp.bench.timing import Summary, summarise
from glyphoxa_mcp.db.change_feed import listening
from glyphoxa_mcp.domain.models import NewEntry, SearchFilters
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.pipeline.ingest import ingest_entries
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.recording.recorder import Recorder
from glyphoxa_mcp.recording.utterances import SpokenUtterance
from glyphoxa_mcp.server.resource_uris import hot_uri
from glyphoxa_mcp.server.subscriptions import HotSubscriptions

SESSION_ID = f"{SESSION_PREFIX}live"
TARGET_SEARCHABLE_MS = 5000.0
TARGET_NOTIFIED_MS = 1000.0
# A player's pause between lines: the next line is appended after this much quiet.
PAUSE_S = 0.1
# No single line may take longer; the run stops with an error instead of hanging.
LINE_TIMEOUT_S = 60.0


class LiveRecordingResult(BaseModel):
    lines: int
    session_lines_before: int
    append: Summary
    hot_notification: Summary
    searchable: Summary
    target_notified_ms: float = TARGET_NOTIFIED_MS
    target_searchable_ms: float = TARGET_SEARCHABLE_MS


def _marker(number: int) -> str:
    """A word no other line of the dataset has, so a search finds exactly this line: a
    number, which name correction leaves alone (a made-up word may sound like one of the
    campaign's 10,000 names and be put back as it)."""
    return str(7_000_000 + number)


async def measure_live_recording(
    app: App, npc_id: str, before: Sequence[NewEntry], lines: int
) -> LiveRecordingResult:
    memory = app.memory(CAMPAIGN_ID)
    await ingest_entries(app.db, CAMPAIGN_ID, SESSION_ID, before)
    await process_session(memory, app.embedder, SESSION_ID)
    start = max(e.spoken_at for e in before) + timedelta(seconds=5)
    # The NPC is at the scene the lines are spoken in: a line reaches the subscribers of the
    # NPCs who heard it, and in a witnessed campaign only they hear it.
    await memory.scenes.record(
        [Scene(session_id=SESSION_ID, started_at=start, present=(npc_id,), title="live")]
    )
    subscriptions = HotSubscriptions(memory, npc_id)
    watched = hot_uri(npc_id, SESSION_ID)
    notified = anyio.Event()

    def heard(event: object) -> None:
        if getattr(event, "uri", None) == watched:
            notified.set()

    subscriptions.bus.subscribe(heard)
    appends: list[float] = []
    notifications: list[float] = []
    searches: list[float] = []
    async with (
        listening(app.db.location.dsn, subscriptions.on_change),
        anyio.create_task_group() as tasks,
    ):
        recorder = Recorder(app, tasks)
        for number in range(lines):
            notified = anyio.Event()
            marker = _marker(number)
            line = SpokenUtterance(
                utterance_id=f"bench-live-{number}",
                speaker_id="p1",
                speaker_name="Kael",
                text=f"We mark door {marker} and move on.",
                timestamp=start + timedelta(seconds=4 * number),
            )
            with anyio.fail_after(LINE_TIMEOUT_S):
                began = time.perf_counter()
                await recorder.append(CAMPAIGN_ID, SESSION_ID, [line])
                appends.append((time.perf_counter() - began) * 1000)
                await notified.wait()
                notifications.append((time.perf_counter() - began) * 1000)
                await recorder.searchable(CAMPAIGN_ID, SESSION_ID)
                found = await memory.index.search_text(
                    marker, SearchFilters(session_id=SESSION_ID), k=1
                )
                searches.append((time.perf_counter() - began) * 1000)
            if not found or marker not in found[0].chunk.content:
                raise AssertionError(
                    f"line {number} ({marker}) was not found by search after indexing: "
                    f"{[m.chunk.content for m in found]}"
                )
            await anyio.sleep(PAUSE_S)
        tasks.cancel_scope.cancel()
    return LiveRecordingResult(
        lines=lines,
        session_lines_before=len(before),
        append=summarise(appends),
        hot_notification=summarise(notifications),
        searchable=summarise(searches),
    )
