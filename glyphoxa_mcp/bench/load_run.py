"""`bench load`: `serve --transport http` on loopback (`http_serve`), and many MCP clients in
processes of their own (`load_clients`) calling it at once over streamable HTTP for a set
time.

Every client has a bearer token of its viewer (the DM or one of a table's NPCs, made for the
run and revoked after it), opens its session and calls each tool once before the clock
starts, then calls the tools in the mix of `load.TOOL_MIX` back to back, with the bench
workload's arguments, until the time is up; a "busy, retry after N ms" answer is waited out
first, as a client should. A client whose session breaks opens a new one.
The yardstick rows of the bench are timed just before and just after.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from glyphoxa_mcp import __version__
from glyphoxa_mcp.access import Grant, NewToken
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
    NPC_VIEWERS,
    OK,
    CallRecord,
    LoadSettings,
    tier_loads,
    tool_loads,
    viewers_of,
)
from glyphoxa_mcp.bench.load_clients import (
    WARMING_AT_ONCE,
    ClientProcesses,
    GroupPlan,
    PlannedClient,
    groups_of,
)
from glyphoxa_mcp.bench.load_report import CLIENTS, POSTGRES, PROCESSES, SERVE, LoadReport
from glyphoxa_mcp.bench.machine import this_machine
from glyphoxa_mcp.bench.operations import (
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
from glyphoxa_mcp.bench.workload import VARIANTS, build_workload
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.storage.access_tokens import AccessTokens

# Bearer tokens are made for the deepest tier, so each client may call the tier it is given.
TOKEN_TIER = Tier.DEEP
YARDSTICK_SAMPLES = 200
TOKEN_LABEL = "bench load"


def tier_of(client: int, tiers: tuple[Tier, ...]) -> Tier:
    return tiers[client % len(tiers)]


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
            plans = _plans(dataset, settings, viewers, made, served.base)
            say(
                f"serving at {served.base}; {settings.clients} clients in "
                f"{len(plans)} processes opening their sessions"
            )
            with ClientProcesses(plans).started() as clients:
                # The clients' processes with this one (which only waits while the clock
                # runs); `serve` is read with any process it starts.
                cpu = CpuMeter(
                    CLIENTS,
                    {SERVE: process_tree(served.pid), POSTGRES: postgres},
                    own_counter=clients.cpu_s,
                )
                await clients.ready()
                say(f"all clients ready; calling for {settings.seconds} s")
                opening = cpu.opening()
                began = time.perf_counter()
                clients.start(time.monotonic() + settings.seconds)
                results = await clients.results()
                elapsed_s = time.perf_counter() - began
                cpu_ms = spent_ms(opening, cpu.closing())
    finally:
        for grant, _ in made.values():
            await tokens.revoke(grant.id)
    records = [record for result in results for record in result.records]
    lags_ms = [lag for result in results for lag in result.lags_ms]
    reconnects = sum(result.reconnects for result in results)
    lag = summarise(lags_ms) if lags_ms else None
    return _Driven(records, elapsed_s, reconnects, served.log, lag, cpu_ms)


def _plans(
    dataset: Dataset,
    settings: LoadSettings,
    viewers: list[str | None],
    made: dict[str | None, tuple[Grant, NewToken]],
    base: str,
) -> list[GroupPlan]:
    """Each client process's clients: every viewer's workload, tier and token."""
    planned = [
        PlannedClient(
            number,
            npc_id,
            tier_of(number, settings.tiers),
            build_workload(dataset, npc_id, seed=number),
        )
        for number, npc_id in enumerate(viewers)
    ]
    groups = groups_of(planned, settings.processes)
    tokens = {npc_id: token.token for npc_id, (_, token) in made.items()}
    warming = max(1, WARMING_AT_ONCE // len(groups))
    return [GroupPlan(base, CAMPAIGN_ID, tokens, group, warming) for group in groups]


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
        client_processes=settings.processes,
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
