"""One benchmark run: a database, the dataset in it, every measurement, and the report."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import anyio
from mcp.client import Client
from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp import __version__
from glyphoxa_mcp.app import App, open_app
from glyphoxa_mcp.bench import bulk_loader
from glyphoxa_mcp.bench.cpu import CpuMeter, per_call_ms, postgres_counter
from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID, Dataset, generate
from glyphoxa_mcp.bench.edits_under_load import measure_edits_under_load
from glyphoxa_mcp.bench.floors import floor_operations
from glyphoxa_mcp.bench.ingestion import forget_ingested, measure_ingestion, new_sessions
from glyphoxa_mcp.bench.live_recording import measure_live_recording
from glyphoxa_mcp.bench.machine import this_machine
from glyphoxa_mcp.bench.name_correction import name_correction
from glyphoxa_mcp.bench.operations import (
    EMBEDDING_TOOLS,
    HOT_RESOURCE,
    STANDALONE,
    BenchContext,
    PrecomputedEmbedder,
    ServerTimer,
    tool_operations,
)
from glyphoxa_mcp.bench.peers import ranking_operations, require_peers
from glyphoxa_mcp.bench.report import (
    BENCH_PROCESS,
    IN_PROCESS,
    NO_SCOPE,
    POSTGRES_PROCESS,
    SERVER,
    STDIO,
    BenchReport,
    DatabaseReport,
    DatasetReport,
    JudgedEdits,
    Measurement,
    Mode,
    judged,
)
from glyphoxa_mcp.bench.scene_change import measure_scene_changes
from glyphoxa_mcp.bench.secret_check import secret_check
from glyphoxa_mcp.bench.spec import DatasetSpec
from glyphoxa_mcp.bench.stdio import stdio_client
from glyphoxa_mcp.bench.timing import Operation, Timed, measure, measure_together, summarise
from glyphoxa_mcp.bench.vectors import DIMENSION
from glyphoxa_mcp.bench.workload import VARIANTS, Workload, build_workload
from glyphoxa_mcp.config import DatabaseSettings, Settings
from glyphoxa_mcp.db.database import (
    Database,
    DatabaseLocation,
    ensure_database_exists,
    migrate_dsn,
    redact_dsn,
)
from glyphoxa_mcp.db.embedded import EMBEDDED_DATABASE, database_dsn, start_embedded_server
from glyphoxa_mcp.db.vector_connection import SELECT_PGVECTOR_VERSION
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.errors import GlyphoxaError, InvalidInputError
from glyphoxa_mcp.pipeline.read_all_names import read_all_names
from glyphoxa_mcp.providers.embeddings import Embedder, EmbeddingSettings
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View

Say = Callable[[str], None]
# The servers measured let calls run this long, so that a slow call is timed rather than
# cancelled at the tier's deadline; the report counts those past the tier's own deadline.
MEASURING_DEADLINE_MS = 60_000
# The live session is measured half-way through a night's play.
LIVE_BEFORE = 500


class BenchSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    spec: DatasetSpec = DatasetSpec()
    samples: int = Field(default=200, ge=1, le=1_000_000)
    # One pass over every argument set first: the figures are of a server in use.
    warmup: int = Field(default=VARIANTS, ge=0, le=1_000_000)
    ingest_utterances: int = Field(default=2000, ge=0, le=1_000_000)
    live_lines: int = Field(default=30, ge=0, le=10_000)
    edit_seconds: float = Field(default=20.0, ge=0, le=600)
    scene_changes: int = Field(default=40, ge=0, le=10_000)
    tier: Tier = Tier.STANDARD
    # Neither: a temporary embedded server, deleted at exit.
    dsn: str | None = None
    data_dir: Path | None = None
    replace: bool = False


@contextlib.asynccontextmanager
async def bench_location(settings: BenchSettings) -> AsyncIterator[DatabaseLocation]:
    """The database to benchmark in; never the user's own data directory unless given."""
    if settings.dsn is not None:
        yield DatabaseLocation(settings.dsn, redact_dsn(settings.dsn))
        return
    if settings.data_dir is not None:
        data_dir, keep = settings.data_dir, True
    else:
        # Not removed by us while the server runs: pgserver stops it (and deletes its data)
        # at exit, after which the folder goes too.
        data_dir, keep = Path(tempfile.mkdtemp(prefix="glyphoxa-bench-")), False
        atexit.register(shutil.rmtree, data_dir, True)
    admin = await anyio.to_thread.run_sync(
        lambda: start_embedded_server(data_dir, delete_on_exit=not keep)
    )
    await ensure_database_exists(admin, EMBEDDED_DATABASE)
    where = f"embedded PostgreSQL in {data_dir}" + ("" if keep else " (temporary)")
    yield DatabaseLocation(database_dsn(admin, EMBEDDED_DATABASE), where)


async def _prepare(
    location: DatabaseLocation, dataset: Dataset, replace: bool, say: Say
) -> bulk_loader.LoadTimings | None:
    """Load the dataset, unless this very dataset is loaded already (then None)."""
    found = await bulk_loader.loaded(location.dsn, dataset)
    if found is bulk_loader.Loaded.SAME:
        say(f"reusing the benchmark campaign already loaded in {location.description}")
        await forget_ingested(location.dsn)  # left by a run that was cut short
        return None
    if found is bulk_loader.Loaded.OTHER:
        if not replace:
            raise InvalidInputError(
                f"The campaign {CAMPAIGN_ID!r} in {location.description} is not this dataset "
                "(other sizes or seed, or an unfinished load). Pass --replace to delete it and "
                "load this one."
            )
        say(f"deleting the other campaign {CAMPAIGN_ID!r}")
        await bulk_loader.delete_campaign(location.dsn)
    return await bulk_loader.load(location.dsn, dataset, say)


def _measurements(name: str, scope: str, mode: Mode, timed: Timed, tier: Tier) -> list[Measurement]:
    """The latency around the calls in `mode`, and server-side if the server reported it; both
    with the CPU per call of the timed calls, if it was read."""
    cpu = None if timed.cpu_ms is None else per_call_ms(timed.cpu_ms, len(timed.around))
    measured = []
    for measured_mode, durations in ((mode, timed.around), (SERVER, timed.reported)):
        if durations is not None:
            measured.append(
                Measurement(
                    operation=name,
                    scope=scope,
                    mode=measured_mode,
                    latency=summarise(durations),
                    over_deadline=sum(d > tier_policy(tier).deadline_ms for d in durations),
                    cpu_ms_per_call=cpu,
                )
            )
    return measured


async def _timed(
    operations: Sequence[Operation],
    scope: str,
    mode: Mode,
    settings: BenchSettings,
    say: Say,
    cpu: CpuMeter | None = None,
) -> list[Measurement]:
    measured = []
    for operation in operations:
        say(f"  {mode:<10} {scope:<24} {operation.name}")
        timed = await measure(operation, samples=settings.samples, warmup=settings.warmup, cpu=cpu)
        measured += _measurements(operation.name, scope, mode, timed, settings.tier)
    return measured


def _scope(workload: Workload) -> str:
    return "dm" if workload.npc_id is None else f"npc:{workload.npc_id}"


async def _measure_scopes(
    db: Database,
    dsn: str,
    workloads: Sequence[Workload],
    embedder: Embedder,
    settings: BenchSettings,
    say: Say,
    cpu: CpuMeter | None = None,
) -> list[Measurement]:
    """Every MCP operation in each workload's scope, through the SDK's client: on the server
    in this process (timed around the call, and inside the server), with precomputed query
    vectors and with the embedder, and on a `serve` subprocess over stdio. The calls of one
    operation are made in turn (in process and over stdio, in each scope), so that their
    differences are the transport's and the scope's and not a change in the machine's load.
    Then the floors under the tools (bench/floors.py), learned from the in-process server
    with precomputed vectors."""
    # The tier's tools only (FAST offers one); the hot resource is in every tier.
    offered = {tool.value for tool in tier_policy(settings.tier).tools} | {HOT_RESOURCE}
    # One memory for every server, as `serve` shares one between its tiers.
    memory = CampaignMemory(db, CAMPAIGN_ID)
    measured = []
    async with contextlib.AsyncExitStack() as stack:
        # Per scope: operation name -> (mode, operation) in the order they are called.
        paired: list[dict[str, list[tuple[Mode, Operation]]]] = []
        floor_clients = []
        for workload in workloads:
            servers = []
            for model in (PrecomputedEmbedder(workload.query_vectors, DIMENSION), embedder):
                view = View(memory, workload.npc_id, model)
                await view.warm_up()  # as `serve` does before it serves
                state = ServerState(view, tier_policy(settings.tier, MEASURING_DEADLINE_MS))
                server = build_server(
                    state, subscriptions=HotSubscriptions(memory, workload.npc_id)
                )
                timer = ServerTimer()
                timer.attach(server)
                servers.append((server, timer))
            (plain_server, plain_timer), (embedding_server, embedding_timer) = servers
            plain = await stack.enter_async_context(Client(plain_server, raise_exceptions=True))
            embedding = await stack.enter_async_context(
                Client(embedding_server, raise_exceptions=True)
            )
            remote = await stack.enter_async_context(
                stdio_client(dsn, workload.npc_id, settings.tier, MEASURING_DEADLINE_MS)
            )
            floor_clients.append(plain)
            operations: dict[str, list[tuple[Mode, Operation]]] = {}
            for operation in [
                *tool_operations(
                    plain, workload, only=offered, embeds_queries=False, timer=plain_timer
                ),
                *tool_operations(
                    embedding,
                    workload,
                    only=offered.intersection(EMBEDDING_TOOLS),
                    embeds_queries=True,
                    timer=embedding_timer,
                ),
            ]:
                operations[operation.name] = [(IN_PROCESS, operation)]
            for operation in tool_operations(remote, workload, only=offered, embeds_queries=True):
                operations[operation.name].append((STDIO, operation))
            paired.append(operations)
        scopes = [_scope(w) for w in workloads]
        for name in paired[0]:
            together = [
                (scope, mode, operation)
                for scope, operations in zip(scopes, paired, strict=True)
                for mode, operation in operations[name]
            ]
            say(
                f"  {' and '.join(dict.fromkeys(m for _, m, _ in together))} "
                f"{', '.join(scopes)}: {name}"
            )
            timed = await measure_together(
                [operation for _, _, operation in together],
                samples=settings.samples,
                warmup=settings.warmup,
                cpu=cpu,
            )
            for (scope, mode, _), taken in zip(together, timed, strict=True):
                measured += _measurements(name, scope, mode, taken, settings.tier)
        calls = settings.warmup + settings.samples
        for workload, scope, plain in zip(workloads, scopes, floor_clients, strict=True):
            floors = await floor_operations(plain, db, workload, offered, calls)
            measured += await _timed(floors, scope, IN_PROCESS, settings, say, cpu)
    return measured


async def _database_report(db: Database) -> DatabaseReport:
    async with db.pool.acquire() as conn:
        return DatabaseReport(
            location=db.location.description,
            server_version=await conn.fetchval("SHOW server_version"),
            pgvector_version=await conn.fetchval(SELECT_PGVECTOR_VERSION),
        )


@contextlib.contextmanager
def _own_errors() -> Iterator[None]:
    """The SDK's clients run in task groups, which wrap what is raised in exception groups;
    our own errors (a failed call, an unreachable database) come out as themselves."""
    try:
        yield
    except BaseExceptionGroup as group:
        ours = group.subgroup(GlyphoxaError)
        if ours is None:
            raise
        first: BaseException = ours
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from group


async def run_bench(settings: BenchSettings, say: Say) -> BenchReport:
    require_peers()  # before a load that may take minutes
    with _own_errors():
        return await _run(settings, say)


@dataclass(frozen=True)
class PreparedBench:
    """The bench's campaign loaded (or found loaded), and the app over it."""

    location: DatabaseLocation
    dataset: Dataset
    dataset_report: DatasetReport
    app: App


@contextlib.asynccontextmanager
async def prepared_bench(settings: BenchSettings, say: Say) -> AsyncIterator[PreparedBench]:
    """The database the settings name, migrated, with this dataset loaded (reused when it is
    already), and the offline app over it with its model loaded: what every bench command
    measures on."""
    async with bench_location(settings) as location:
        say(f"database: {location.description}")
        await migrate_dsn(location.dsn, DIMENSION)
        say(f"generating the dataset {settings.spec.model_dump()}")
        began = time.perf_counter()
        dataset = await anyio.to_thread.run_sync(generate, settings.spec)
        generate_s = time.perf_counter() - began
        load = await _prepare(location, dataset, settings.replace, say)
        report = DatasetReport(
            spec=settings.spec,
            rows=await bulk_loader.row_counts(location.dsn),
            generate_s=round(generate_s, 2),
            load=load,
        )
        offline = Settings(
            database=DatabaseSettings.build(dsn=location.dsn, embedding_dim=DIMENSION),
            embedding=EmbeddingSettings(provider="local"),
        )
        async with open_app(offline) as app:
            # Load the model now: its first use takes seconds, which no measurement should see.
            await app.warm_up()
            # As a server that has served the campaign a while has kept them: the names read
            # in its lines and facts (minutes the first time, at reference scale).
            say("reading the names in every line and fact not read under these names yet")
            read = await read_all_names(CampaignMemory(app.db, CAMPAIGN_ID))
            say(f"{read.worked_out:,} of {read.texts:,} texts read now")
            yield PreparedBench(location, dataset, report, app)


async def _run(settings: BenchSettings, say: Say) -> BenchReport:
    started_at = datetime.now(UTC)
    machine = this_machine()
    async with prepared_bench(settings, say) as prepared:
        location, dataset, app = prepared.location, prepared.dataset, prepared.app
        dataset_report = prepared.dataset_report
        db, embedder = app.db, app.embedder
        postgres, cpu_note = await postgres_counter(db)
        cpu = CpuMeter(BENCH_PROCESS, {POSTGRES_PROCESS: postgres})
        measurements: list[Measurement] = []
        workloads = [
            build_workload(dataset, npc_id)
            for npc_id in (None, dataset.bench_npc, dataset.companion_npc)
        ]
        queries = workloads[0].queries
        measurements += await _measure_scopes(
            db, location.dsn, workloads[:1], embedder, settings, say, cpu
        )
        # The benchmarked NPC under the witness rule and its companion, who hears every
        # line, call by call in turn: the rule's cost, as the same run sees it.
        measurements += await _measure_scopes(
            db, location.dsn, workloads[1:], embedder, settings, say, cpu
        )
        context = BenchContext(
            db=db,
            dataset=dataset,
            embedder=embedder,
            queries=queries,
            # The rankings alone are asked what the DM's search_sessions asks.
            session_searches=workloads[0].search_sessions,
            query_vectors=workloads[0].query_vectors,
        )
        for operations in (*STANDALONE, name_correction, secret_check):
            measurements += await _timed(
                operations(context), NO_SCOPE, IN_PROCESS, settings, say, cpu
            )
        rankings = await ranking_operations(context)
        measurements += await _timed(rankings, NO_SCOPE, IN_PROCESS, settings, say, cpu)
        ingestion = None
        if settings.ingest_utterances:
            say(f"ingesting and processing {settings.ingest_utterances} utterances")
            sessions = new_sessions(dataset, settings.ingest_utterances)
            try:
                ingestion = await measure_ingestion(db, sessions, embedder)
            finally:
                await forget_ingested(location.dsn)
        live = None
        if settings.live_lines:
            say(f"recording {settings.live_lines} lines live into a session of {LIVE_BEFORE}")
            (before,) = new_sessions(dataset, LIVE_BEFORE, seed=1)
            try:
                live = await measure_live_recording(
                    app, dataset.bench_npc, before, settings.live_lines
                )
            finally:
                await forget_ingested(location.dsn)
        scene_changes = None
        if settings.scene_changes:
            say(f"changing who is present in the scene being played {settings.scene_changes} times")
            scene_changes = await measure_scene_changes(
                db, dataset, embedder, settings.scene_changes
            )
        edits = None
        if settings.edit_seconds:
            say(f"editing entities once a second for {settings.edit_seconds:g} s while calls run")
            edits = JudgedEdits.of(
                await measure_edits_under_load(db, dataset, settings.edit_seconds)
            )
        database = await _database_report(db)
    return BenchReport(
        glyphoxa_version=__version__,
        started_at=started_at,
        command=" ".join(["glyphoxa-mcp", *sys.argv[1:]]),
        machine=machine.model_copy(update={"load_average_end": round(os.getloadavg()[0], 2)}),
        database=database,
        dataset=dataset_report,
        tier=settings.tier.value,
        samples=settings.samples,
        warmup=settings.warmup,
        measurements=judged(
            measurements,
            without_rule={_scope(workloads[1]): _scope(workloads[2])},
        ),
        ingestion=ingestion,
        live_recording=live,
        scene_changes=scene_changes,
        edits_under_load=edits,
        cpu_notes=[cpu_note] if cpu_note else [],
    )
