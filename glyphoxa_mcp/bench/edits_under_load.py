"""Entities edited while calls run (issue 17): no call of any tier may fail its deadline
because a DM edited an entity or an extraction stored one.

A FAST, a STANDARD and a DEEP server (in process, each with its tier's own deadline) serve
the benchmarked NPC, one MCP client each calling its tier's tools and the hot resource back
to back, while an editor changes an entity about once a second: a rename, a touch, or its
secret turned on or off, each of an entity other than the NPC. Every call after an edit
finds the scope changed and must bring it up to date within its deadline. Everything edited
is put back at the end.
"""

from __future__ import annotations

import inspect
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.client import Client
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, ConfigDict

from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID, Dataset
from glyphoxa_mcp.bench.operations import (
    HOT_RESOURCE,
    PrecomputedEmbedder,
    tool_operations,
)
from glyphoxa_mcp.bench.timing import Operation
from glyphoxa_mcp.bench.vectors import DIMENSION
from glyphoxa_mcp.bench.workload import Workload, build_workload
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View

EDITS_PER_SECOND = 1.0
EDIT_KINDS = ("rename", "touch", "secret")
RENAMED_SUFFIX = " the Elder"
SEED = 17
# The edits are statements of the bench campaign, on the entities table only.
RENAME = (
    "UPDATE entities SET name = name || $3, updated_at = now() WHERE campaign_id = $1 AND id = $2"
)
TOUCH = "UPDATE entities SET updated_at = now() WHERE campaign_id = $1 AND id = $2"
TOGGLE_SECRET = (
    "UPDATE entities SET secret = NOT secret, updated_at = now() WHERE campaign_id = $1 AND id = $2"
)
SELECT_ORIGINAL = "SELECT name, secret FROM entities WHERE campaign_id = $1 AND id = $2"
RESTORE = "UPDATE entities SET name = $3, secret = $4 WHERE campaign_id = $1 AND id = $2"
# A rename clears the vectors of the entity's relationships (their sentences name it;
# sql/021): kept, to be put back with the name, so the next run measures the same campaign.
SELECT_VECTORS = """
SELECT id, embedding FROM relationships
WHERE campaign_id = $1 AND (source_id = $2 OR target_id = $2) AND embedding IS NOT NULL
"""
RESTORE_VECTOR = "UPDATE relationships SET embedding = $3 WHERE campaign_id = $1 AND id = $2"


class TierUnderEdits(BaseModel):
    """One tier's calls while entities were edited."""

    model_config = ConfigDict(frozen=True)

    tier: Tier
    deadline_ms: int
    calls: int
    failed: int
    """Calls answered with an error (a deadline passed is one) or raising."""
    over_deadline: int
    """Calls whose answer took longer than the tier's deadline, as the client saw it."""
    p50_ms: float | None
    p95_ms: float | None
    max_ms: float | None
    calls_after_edit: int
    """The tier's first call after each edit: the one that finds the scope changed."""
    failed_after_edit: int
    """Of those, the ones that failed or took longer than the deadline: because of an edit."""
    p95_after_edit_ms: float | None
    max_after_edit_ms: float | None


class EditsUnderLoadResult(BaseModel):
    """What `measure_edits_under_load` saw."""

    model_config = ConfigDict(frozen=True)

    seconds: float
    npc_id: str
    edits: int
    edits_by_kind: dict[str, int]
    tiers: tuple[TierUnderEdits, ...]

    @property
    def failed_after_edit(self) -> int:
        """Calls that failed their deadline (or at all) on finding an entity edited."""
        return sum(tier.failed_after_edit for tier in self.tiers)


@dataclass
class _Calls:
    durations_ms: list[float] = field(default_factory=list)
    failed: list[bool] = field(default_factory=list)
    after_edit: list[bool] = field(default_factory=list)


async def measure_edits_under_load(
    db: Database,
    dataset: Dataset,
    seconds: float,
    *,
    edits_per_second: float = EDITS_PER_SECOND,
    tiers: Sequence[Tier] = tuple(Tier),
    deadlines_ms: Mapping[Tier, int] | None = None,
) -> EditsUnderLoadResult:
    """Edit entities of the bench campaign `edits_per_second` times a second for `seconds`
    while one client per tier calls the benchmarked NPC's server of that tier (with the
    tier's deadline, or the one `deadlines_ms` gives)."""
    npc = dataset.bench_npc
    memory = CampaignMemory(db, CAMPAIGN_ID)
    workload = build_workload(dataset, npc)
    embedder = PrecomputedEmbedder(workload.query_vectors, DIMENSION)
    editable = sorted(e.id for e in dataset.entities if e.id != npc)
    editor = _Editor(db, editable)
    calls = {tier: _Calls() for tier in tiers}
    policies = {tier: tier_policy(tier, (deadlines_ms or {}).get(tier)) for tier in tiers}
    try:
        async with anyio.create_task_group() as tasks:
            for tier in tiers:
                view = View(memory, npc, embedder)
                await view.warm_up()  # as `serve` does before it serves
                server = build_server(
                    ServerState(view, policies[tier]),
                    subscriptions=HotSubscriptions(memory, npc),
                )
                offered = {t.value for t in policies[tier].tools} | {HOT_RESOURCE}
                tasks.start_soon(
                    _call_until, server, workload, offered, seconds, editor, calls[tier]
                )
            await _edit_until(editor, seconds, edits_per_second)
    finally:
        await editor.restore()
    return EditsUnderLoadResult(
        seconds=seconds,
        npc_id=npc,
        edits=editor.edits,
        edits_by_kind=dict(editor.kinds),
        tiers=tuple(_tier_result(tier, policies[tier].deadline_ms, calls[tier]) for tier in tiers),
    )


async def _call_until(
    server: MCPServer,
    workload: Workload,
    offered: set[str],
    seconds: float,
    editor: _Editor,
    calls: _Calls,
) -> None:
    """Call the tier's operations in turn, back to back, for `seconds`, marking each first
    call after an edit."""
    async with Client(server, raise_exceptions=True) as client:
        operations: list[Operation] = tool_operations(
            client, workload, only=offered, embeds_queries=False
        )
        stop = time.perf_counter() + seconds
        number = seen_edits = 0
        while time.perf_counter() < stop:
            operation = operations[number % len(operations)]
            calls.after_edit.append(editor.edits > seen_edits)
            seen_edits = editor.edits
            started = time.perf_counter()
            failed = False
            try:
                answered = operation.call(number)
                if inspect.isawaitable(answered):
                    await answered
            except Exception:  # an error answer (BenchError) or a broken call alike
                failed = True
            calls.durations_ms.append((time.perf_counter() - started) * 1000)
            calls.failed.append(failed)
            number += 1


async def _edit_until(editor: _Editor, seconds: float, edits_per_second: float) -> None:
    interval = 1 / edits_per_second
    stop = time.perf_counter() + seconds
    next_edit = time.perf_counter() + interval / 2
    while next_edit < stop:
        await anyio.sleep(max(0.0, next_edit - time.perf_counter()))
        await editor.edit()
        next_edit += interval


class _Editor:
    """Edits entities in turn (rename, touch, secret), remembering how they were."""

    def __init__(self, db: Database, editable: list[str]) -> None:
        self._pool = db.pool
        self._editable = editable
        self._rng = random.Random(SEED)
        self._original: dict[str, tuple[str, bool]] = {}
        self._vectors: dict[int, Any] = {}
        self.kinds: dict[str, int] = dict.fromkeys(EDIT_KINDS, 0)

    @property
    def edits(self) -> int:
        """Edits committed so far."""
        return sum(self.kinds.values())

    async def edit(self) -> None:
        kind = EDIT_KINDS[self.edits % len(EDIT_KINDS)]
        entity_id = self._rng.choice(self._editable)
        if entity_id not in self._original:
            row = await self._pool.fetchrow(SELECT_ORIGINAL, CAMPAIGN_ID, entity_id)
            if row is None:
                return
            self._original[entity_id] = (row["name"], row["secret"])
            for link in await self._pool.fetch(SELECT_VECTORS, CAMPAIGN_ID, entity_id):
                self._vectors.setdefault(link["id"], link["embedding"])
        if kind == "rename":
            await self._pool.execute(RENAME, CAMPAIGN_ID, entity_id, RENAMED_SUFFIX)
        elif kind == "touch":
            await self._pool.execute(TOUCH, CAMPAIGN_ID, entity_id)
        else:
            await self._pool.execute(TOGGLE_SECRET, CAMPAIGN_ID, entity_id)
        self.kinds[kind] += 1

    async def restore(self) -> None:
        """Every edited entity as it was (its name and secret; `updated_at` moves on), and
        its relationships' vectors."""
        with anyio.CancelScope(shield=True):
            for entity_id, (name, secret) in self._original.items():
                await self._pool.execute(RESTORE, CAMPAIGN_ID, entity_id, name, secret)
            await self._pool.executemany(
                RESTORE_VECTOR,
                [(CAMPAIGN_ID, link_id, vector) for link_id, vector in self._vectors.items()],
            )


def _tier_result(tier: Tier, deadline_ms: int, calls: _Calls) -> TierUnderEdits:
    late = [
        failed or ms > deadline_ms
        for failed, ms in zip(calls.failed, calls.durations_ms, strict=True)
    ]
    after = [i for i, marked in enumerate(calls.after_edit) if marked]
    after_ms = [calls.durations_ms[i] for i in after]
    return TierUnderEdits(
        tier=tier,
        deadline_ms=deadline_ms,
        calls=len(calls.durations_ms),
        failed=sum(calls.failed),
        over_deadline=sum(1 for ms in calls.durations_ms if ms > deadline_ms),
        p50_ms=_percentile(calls.durations_ms, 0.5),
        p95_ms=_percentile(calls.durations_ms, 0.95),
        max_ms=_percentile(calls.durations_ms, 1.0),
        calls_after_edit=len(after),
        failed_after_edit=sum(late[i] for i in after),
        p95_after_edit_ms=_percentile(after_ms, 0.95),
        max_after_edit_ms=_percentile(after_ms, 1.0),
    )


def _percentile(durations: Sequence[float], share: float) -> float | None:
    if not durations:
        return None
    ordered = sorted(durations)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)
