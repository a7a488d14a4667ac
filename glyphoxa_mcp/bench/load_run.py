"""`bench load`: `serve --transport http` on loopback (`http_serve`), and many MCP clients in
this process calling it at once over streamable HTTP for a set time.

Every client has a bearer token of its viewer (the DM or one of a table's NPCs, made for the
run and revoked after it), opens its session and calls each tool once before the clock
starts, then calls the tools in the mix of `load.TOOL_MIX` back to back, with the bench
workload's arguments, until the time is up; a "busy, retry after N ms" answer is waited out
first, as a client should. A client whose session breaks opens a new one.
The yardstick rows of the bench are timed just before and just after.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
from httpx2 import AsyncClient as HttpClient
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from glyphoxa_mcp import __version__
from glyphoxa_mcp.app import App
from glyphoxa_mcp.bench.cpu import (
    CpuCounter,
    CpuMeter,
    per_call_ms,
    postgres_counter,
    process_tree,
    spent_ms,
)
from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID, Dataset
from glyphoxa_mcp.bench.http_serve import serving
from glyphoxa_mcp.bench.load import (
    CONNECT,
    ERROR,
    EXCEPTION,
    NPC_VIEWERS,
    OK,
    TOOL_MIX,
    CallRecord,
    LoadSettings,
    Outcome,
    next_tool,
    tier_loads,
    tool_loads,
    viewers_of,
)
from glyphoxa_mcp.bench.load_report import CLIENTS, POSTGRES, PROCESSES, SERVE, LoadReport
from glyphoxa_mcp.bench.machine import this_machine
from glyphoxa_mcp.bench.operations import (
    QUERY_ENTITIES,
    SEARCH_FACTS,
    SEARCH_SESSIONS,
    SESSION_SUMMARY,
    BenchContext,
    database_round_trip,
    query_embedding,
)
from glyphoxa_mcp.bench.report import IN_PROCESS, NO_SCOPE, Measurement
from glyphoxa_mcp.bench.runner import (
    BenchSettings,
    Say,
    _database_report,
    _own_errors,
    prepared_bench,
)
from glyphoxa_mcp.bench.timing import Summary, measure, summarise
from glyphoxa_mcp.bench.workload import VARIANTS, Workload, build_workload
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import BenchError
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.storage.access_tokens import AccessTokens

# How often the clients' event loop is asked to wake, to see how late it does.
LAG_PROBE_S = 0.05
# Bearer tokens are made for the deepest tier, so each client may call the tier it is given.
TOKEN_TIER = Tier.DEEP
# A request with no answer by then fails (an exception) instead of hanging its client.
READ_TIMEOUT_S = 30
# Before a broken session is opened again.
RECONNECT_PAUSE_S = 0.1
# Clients making their first calls at once, before the clock starts: all of them together
# would only pile cold calls past their deadline.
WARMING_AT_ONCE = 4
YARDSTICK_SAMPLES = 200
RETRY_AFTER = re.compile(r"Retry after (\d+) ms")
TOKEN_LABEL = "bench load"


def endpoint_path(npc_id: str | None, tier: Tier = Tier.STANDARD) -> str:
    viewer = "dm" if npc_id is None else f"npc/{npc_id}"
    return f"/c/{CAMPAIGN_ID}/{viewer}/{tier.value.lower()}/mcp"


def retry_after_s(message: str) -> float:
    """The wait a busy answer asks for ("Retry after N ms."); 0 for any other answer."""
    asked = RETRY_AFTER.search(message)
    return int(asked.group(1)) / 1000 if asked else 0.0


def tier_of(client: int, tiers: tuple[Tier, ...]) -> Tier:
    return tiers[client % len(tiers)]


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}".strip().rstrip(":")


def _arguments(workload: Workload) -> dict[str, tuple[dict[str, Any], ...]]:
    return {
        QUERY_ENTITIES: workload.query_entities,
        SESSION_SUMMARY: workload.session_summary,
        SEARCH_FACTS: workload.search_facts,
        SEARCH_SESSIONS: workload.search_sessions,
    }


@dataclass
class Swarm:
    """The clients of one run and what they recorded."""

    base: str
    tokens: dict[str | None, str]
    clients: int
    ready: anyio.Event = field(default_factory=anyio.Event)
    start: anyio.Event = field(default_factory=anyio.Event)
    warming: anyio.CapacityLimiter = field(
        default_factory=lambda: anyio.CapacityLimiter(WARMING_AT_ONCE)
    )
    warmed: int = 0
    end: float = 0.0
    records: list[CallRecord] = field(default_factory=list)
    reconnects: int = 0

    def time_is_up(self) -> bool:
        return self.start.is_set() and time.monotonic() >= self.end

    @contextlib.asynccontextmanager
    async def session(self, npc_id: str | None, tier: Tier) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self.tokens[npc_id]}"}
        http = HttpClient(headers=headers, timeout=READ_TIMEOUT_S)
        url = self.base + endpoint_path(npc_id, tier)
        async with (
            http,
            Client(
                streamable_http_client(url, http_client=http),
                read_timeout_seconds=READ_TIMEOUT_S,
            ) as client,
        ):
            yield client

    async def calls(
        self,
        client: Client,
        rng: random.Random,
        arguments: dict[str, Any],
        used: dict[str, int],
        tier: Tier,
    ) -> bool:
        """Calls back to back until the time is up (False), or until one fails without an
        answer in a way that may have broken the session (True)."""
        while not self.time_is_up():
            tool = next_tool(rng) if len(arguments) > 1 else next(iter(arguments))
            asked = arguments[tool][used[tool] % len(arguments[tool])]
            used[tool] += 1
            began = time.perf_counter_ns()
            try:
                result = await client.call_tool(tool, asked)
            except MCPError as exc:  # an error answer: the session goes on
                self._record(tool, tier, began, EXCEPTION, _describe(exc))
                continue
            except Exception as exc:
                self._record(tool, tier, began, EXCEPTION, _describe(exc))
                return True
            if result.is_error:
                told = text_of(result.content)
                self._record(tool, tier, began, ERROR, told)
                # As a client should: a busy server's "retry after N ms" is waited out.
                await anyio.sleep(retry_after_s(told))
            else:
                self._record(tool, tier, began, OK)
        return False

    def _record(
        self, tool: str, tier: Tier, began_ns: int, outcome: Outcome, message: str | None = None
    ) -> None:
        duration_ms = (time.perf_counter_ns() - began_ns) / 1e6
        self.records.append(CallRecord(tool, duration_ms, outcome, message, tier.value))

    async def client(self, number: int, npc_id: str | None, workload: Workload, tier: Tier) -> None:
        """One client: its session, a call of every tool its tier offers, the signal that it
        is ready, and its calls once the clock starts; a session that breaks is opened again."""
        rng = random.Random(f"load:{number}")
        offered = {tool.value for tool in tier_policy(tier).tools}
        arguments = {t: a for t, a in _arguments(workload).items() if t in offered}
        used = dict.fromkeys(TOOL_MIX, 0)
        warmed = False
        while True:
            broke = False
            began = time.perf_counter_ns()
            try:
                async with self.session(npc_id, tier) as client:
                    if not warmed:
                        async with self.warming:
                            for tool, rotation in arguments.items():
                                # An error answer is fine here (a cold server may pass a
                                # deadline); a client that cannot call at all stops the run.
                                await client.call_tool(tool, rotation[0])
                        warmed = True
                        self.warmed += 1
                        if self.warmed == self.clients:
                            self.ready.set()
                        await self.start.wait()
                    broke = await self.calls(client, rng, arguments, used, tier)
            except Exception as exc:
                if not warmed:
                    raise BenchError(
                        f"Client {number} ({endpoint_path(npc_id, tier)}) could not start: "
                        f"{_describe(exc)}"
                    ) from exc
                if not broke:
                    self._record(CONNECT, tier, began, EXCEPTION, _describe(exc))
                    broke = True
            if not broke or self.time_is_up():
                return
            self.reconnects += 1
            await anyio.sleep(RECONNECT_PAUSE_S)


async def _yardstick(context: BenchContext) -> list[Measurement]:
    measured = []
    for make in (database_round_trip, query_embedding):
        for operation in make(context):
            timed = await measure(operation, samples=YARDSTICK_SAMPLES, warmup=VARIANTS)
            measured.append(
                Measurement(
                    operation=operation.name,
                    scope=NO_SCOPE,
                    mode=IN_PROCESS,
                    latency=summarise(timed.around),
                )
            )
    return measured


def table_npcs(dataset: Dataset) -> list[str]:
    """The NPCs at the table: the bench's own NPC, then the campaign's most central ones."""
    others = [
        e.id for e in dataset.entities if e.type is EntityType.NPC and e.id != dataset.bench_npc
    ]
    return [dataset.bench_npc, *others][:NPC_VIEWERS]


@dataclass(frozen=True)
class _Driven:
    records: list[CallRecord]
    elapsed_s: float
    reconnects: int
    server_log: dict[str, int]
    client_loop_lag: Summary | None
    # CPU milliseconds of each process over the timed run.
    cpu_ms: dict[str, float | None]


async def _probe_loop(until: float, lags_ms: list[float]) -> None:
    """How late this process's event loop runs a timer, every LAG_PROBE_S until `until`: the
    clients' latencies include it, so a late answer may be the clients' as much as the
    server's."""
    while time.monotonic() < until:
        asked = time.perf_counter()
        await anyio.sleep(LAG_PROBE_S)
        lags_ms.append(max((time.perf_counter() - asked - LAG_PROBE_S) * 1000, 0.0))


async def _drive(
    app: App,
    dataset: Dataset,
    settings: LoadSettings,
    viewers: list[str | None],
    postgres: CpuCounter | None,
    say: Say,
) -> _Driven:
    tokens = AccessTokens(app.db)
    made = {
        npc_id: await tokens.create(
            Viewer.dm(CAMPAIGN_ID) if npc_id is None else Viewer.npc(CAMPAIGN_ID, npc_id),
            TOKEN_TIER,
            TOKEN_LABEL,
        )
        for npc_id in dict.fromkeys(viewers)
    }
    try:
        async with serving(app.db.location.dsn, settings.host) as served:
            say(f"serving at {served.base}; {settings.clients} clients opening their sessions")
            # This process runs the clients (and nothing else while the clock runs); `serve`
            # is read with any process it starts.
            cpu = CpuMeter(CLIENTS, {SERVE: process_tree(served.pid), POSTGRES: postgres})
            swarm = Swarm(
                served.base,
                {npc_id: token.token for npc_id, (_, token) in made.items()},
                len(viewers),
            )
            workloads = [build_workload(dataset, npc, seed=n) for n, npc in enumerate(viewers)]
            async with anyio.create_task_group() as clients:
                for number, npc_id in enumerate(viewers):
                    tier = tier_of(number, settings.tiers)
                    clients.start_soon(swarm.client, number, npc_id, workloads[number], tier)
                await swarm.ready.wait()
                say(f"all clients ready; calling for {settings.seconds} s")
                swarm.end = time.monotonic() + settings.seconds
                opening = cpu.opening()
                began = time.perf_counter()
                swarm.start.set()
                lags_ms: list[float] = []
                clients.start_soon(_probe_loop, swarm.end, lags_ms)
            elapsed_s = time.perf_counter() - began
            cpu_ms = spent_ms(opening, cpu.closing())
    finally:
        for grant, _ in made.values():
            await tokens.revoke(grant.id)
    lag = summarise(lags_ms) if lags_ms else None
    return _Driven(swarm.records, elapsed_s, swarm.reconnects, served.log, lag, cpu_ms)


async def run_load(settings: LoadSettings, say: Say) -> LoadReport:
    with _own_errors():
        return await _run(settings, say)


async def _run(settings: LoadSettings, say: Say) -> LoadReport:
    started_at = datetime.now(UTC)
    machine = this_machine()
    where = BenchSettings(
        spec=settings.spec, dsn=settings.dsn, data_dir=settings.data_dir, replace=settings.replace
    )
    async with prepared_bench(where, say) as prepared:
        dataset, app = prepared.dataset, prepared.app
        viewers = viewers_of(settings.clients, table_npcs(dataset))
        context = BenchContext(
            db=app.db,
            dataset=dataset,
            embedder=app.embedder,
            queries=build_workload(dataset, None).queries,
        )
        postgres, postgres_note = await postgres_counter(app.db)
        say("timing the yardsticks")
        before = await _yardstick(context)
        driven = await _drive(app, dataset, settings, viewers, postgres, say)
        say("timing the yardsticks again")
        after = await _yardstick(context)
        database = await _database_report(app.db)
    deadlines_ms = {tier.value: tier_policy(tier).deadline_ms for tier in settings.tiers}
    # The tool rows against the deepest deadline called (each tier has its own row).
    deadline_ms = max(deadlines_ms.values())
    answered = sum(record.outcome == OK for record in driven.records)
    return LoadReport(
        glyphoxa_version=__version__,
        started_at=started_at,
        command=" ".join(["glyphoxa-mcp", *sys.argv[1:]]),
        machine=machine.model_copy(update={"load_average_end": round(os.getloadavg()[0], 2)}),
        database=database,
        dataset=prepared.dataset_report,
        clients=settings.clients,
        seconds=settings.seconds,
        elapsed_s=round(driven.elapsed_s, 3),
        viewers=["dm" if v is None else f"npc:{v}" for v in viewers],
        tier=",".join(deadlines_ms),
        deadline_ms=deadline_ms,
        tiers=tier_loads(driven.records, driven.elapsed_s, deadlines_ms),
        reconnects=driven.reconnects,
        server_log=driven.server_log,
        tools=tool_loads(driven.records, driven.elapsed_s, deadline_ms),
        yardstick_before=before,
        yardstick_after=after,
        client_loop_lag=driven.client_loop_lag,
        cpu_ms={name: _rounded(driven.cpu_ms[name]) for name in PROCESSES},
        cpu_calls=answered,
        cpu_ms_per_call=per_call_ms({name: driven.cpu_ms[name] for name in PROCESSES}, answered),
        cpu_notes=[postgres_note] if postgres_note else [],
    )


def _rounded(ms: float | None) -> float | None:
    return None if ms is None else round(ms, 1)
