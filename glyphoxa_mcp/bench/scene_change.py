"""A change of who was present: how soon running servers apply it.

The DM takes the benchmarked NPC out of the scene being played and puts it back, again and
again, as the desk's scene page does (`Scenes.record`, one transaction; the database hears
the session again inside it, sql/032). For each change: the DM's call, commit included; from
its commit to the hot-context notification a subscribed NPC hears (through PostgreSQL's
change feed, as `serve` delivers it); and from its commit to the NPC's next hot context
reflecting it (a line someone else said in the scene is in "what was just said" exactly
while the NPC is present). Beside them, hearing the scene's lines and passages again on their
own (what a change to the scene reads, sql/032) and the whole session's (what a change of the
campaign's setting reads per session), with nothing to rewrite: what a change pays before it
writes a row.
"""

from __future__ import annotations

import time
from datetime import datetime

import anyio
from pydantic import BaseModel

from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID, Dataset
from glyphoxa_mcp.bench.timing import Summary, summarise
from glyphoxa_mcp.db.change_feed import listening
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.errors import BenchError
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.server.resource_uris import hot_uri
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.hot_context import HotContext
from glyphoxa_mcp.views.view import View

TARGET_APPLIED_MS = 20.0
# No change may take longer; the run stops with an error instead of hanging.
CHANGE_TIMEOUT_S = 30.0
HEAR_SESSION = "SELECT glyphoxa_hear_session($1, $2)"
HEAR_SCENE = "SELECT glyphoxa_hear_span($1, $2, $3, glyphoxa_scene_end($1, $2, $3))"
SESSION_LINES = "SELECT count(*) FROM session_entries WHERE campaign_id = $1 AND session_id = $2"


class SceneChangeResult(BaseModel):
    changes: int
    session_id: str
    session_lines: int
    change: Summary
    notified: Summary
    read: Summary
    hear_scene: Summary
    hear_session: Summary
    target_applied_ms: float = TARGET_APPLIED_MS

    @property
    def meets(self) -> bool:
        return max(self.notified.p95_ms, self.read.p95_ms) <= self.target_applied_ms


def _witness_line(context: HotContext, npc_name: str) -> datetime:
    """When the newest line the NPC hears in the scene, said by someone else, was said: the
    NPC hears it only while present. (Its time, not its text: the NPC reads the text with
    what it may not know redacted.)"""
    for line in reversed(context.transcript):
        if line.speaker != npc_name:
            return line.spoken_at
    raise BenchError(f"{npc_name} hears no line by anyone else in the scene being played")


async def measure_scene_changes(
    db: Database, dataset: Dataset, embedder: Embedder, changes: int
) -> SceneChangeResult:
    npc = dataset.bench_npc
    memory = CampaignMemory(db, CAMPAIGN_ID)
    session_id = dataset.sessions[-1].id
    played = (await memory.scenes.of_session(session_id))[-1]
    if npc not in played.present:
        raise BenchError(f"{npc} is not in the scene being played in {session_id}")
    npc_name = next(e.name for e in dataset.entities if e.id == npc)
    view = View(memory, npc, embedder)
    subscriptions = HotSubscriptions(memory, npc)
    watched = hot_uri(npc)
    notified = anyio.Event()

    def heard(event: object) -> None:
        if getattr(event, "uri", None) == watched:
            notified.set()

    subscriptions.bus.subscribe(heard)
    with_npc = played
    without_npc = played.model_copy(
        update={"present": tuple(n for n in played.present if n != npc)}
    )
    calls: list[float] = []
    notifications: list[float] = []
    reads: list[float] = []
    try:
        async with listening(db.location.dsn, subscriptions.on_change):
            # Its caches warm, as in a server in use.
            marked = _witness_line(await view.hot_context(npc), npc_name)
            for number in range(changes):
                scene: Scene = without_npc if number % 2 == 0 else with_npc
                present = npc in scene.present
                notified = anyio.Event()
                with anyio.fail_after(CHANGE_TIMEOUT_S):
                    began = time.perf_counter()
                    await memory.scenes.record([scene])
                    committed = time.perf_counter()
                    await notified.wait()
                    notifications.append((time.perf_counter() - committed) * 1000)
                    context = await view.hot_context(npc)
                    reads.append((time.perf_counter() - committed) * 1000)
                calls.append((committed - began) * 1000)
                if any(line.spoken_at == marked for line in context.transcript) != present:
                    raise BenchError(
                        f"change {number}: {npc} {'is' if present else 'is not'} present, "
                        "but its hot context does not show it"
                    )
                await anyio.sleep(0.05)
    finally:
        await memory.scenes.record([with_npc])
    scene_hearings, hearings = [], []
    async with db.pool.acquire() as conn:
        lines = await conn.fetchval(SESSION_LINES, CAMPAIGN_ID, session_id)
        for _ in range(changes):
            began = time.perf_counter()
            await conn.execute(HEAR_SCENE, CAMPAIGN_ID, session_id, played.started_at)
            scene_hearings.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            await conn.execute(HEAR_SESSION, CAMPAIGN_ID, session_id)
            hearings.append((time.perf_counter() - began) * 1000)
    return SceneChangeResult(
        changes=changes,
        session_id=session_id,
        session_lines=lines,
        change=summarise(calls),
        notified=summarise(notifications),
        read=summarise(reads),
        hear_scene=summarise(scene_hearings),
        hear_session=summarise(hearings),
    )
