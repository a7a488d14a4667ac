"""`bench`: latency of every tool and the hot resource, and ingestion throughput, on a
synthetic campaign at reference scale (or smaller)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from glyphoxa_mcp.cli.options import env_option
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.config import DatabaseSettings
from glyphoxa_mcp.domain.wording import counted, rule_of
from glyphoxa_mcp.errors import InvalidInputError

if TYPE_CHECKING:
    from glyphoxa_mcp.bench.load import LoadSettings
    from glyphoxa_mcp.bench.runner import BenchSettings

COUNTS = ("sessions", "entries", "entities", "relationships", "facts")
# Kinds of server log lines printed after a load run (the JSON has them all).
SERVER_LOG_SHOWN = 8


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help="measure tool latency and ingestion throughput on a synthetic campaign",
        description="Generates a seeded synthetic campaign (reference scale: 200 sessions, "
        "200,000 utterances, 10,000 entities, 40,000 relationships, 20,000 facts), loads it "
        "with COPY into a temporary embedded PostgreSQL (or --dsn / --data-dir), and measures "
        "p50/p95/p99 and CPU per call of every MCP tool and the hot resource in process and "
        "through a `serve` subprocess over stdio, then ingestion throughput with the offline "
        "embedder. Prints a table; --json writes every figure. The word ranking is held to "
        "bm25s and reported beside tantivy (pip install 'glyphoxa-mcp[bench]').",
    )
    _add_dataset_options(bench)
    runs = bench.add_argument_group("measuring")
    env_option(
        runs,
        "--samples",
        env="GLYPHOXA_BENCH_SAMPLES",
        help="timed calls per operation",
        type=int,
    )
    env_option(
        runs,
        "--warmup",
        env="GLYPHOXA_BENCH_WARMUP",
        help="untimed calls before them (one pass over every argument set)",
        type=int,
    )
    env_option(
        runs,
        "--ingest-utterances",
        env="GLYPHOXA_BENCH_INGEST_UTTERANCES",
        help="utterances to ingest and process for throughput; 0 skips it",
        type=int,
    )
    env_option(
        runs,
        "--live-lines",
        env="GLYPHOXA_BENCH_LIVE_LINES",
        help="lines appended live through the recorder, each timed to its hot-context "
        "notification and to being found by search; 0 skips it",
        type=int,
    )
    env_option(
        runs,
        "--scene-changes",
        env="GLYPHOXA_BENCH_SCENE_CHANGES",
        help="times the DM takes the benchmarked NPC out of the scene being played or puts "
        "it back, each timed to the subscribed NPC's hot-context notification and to its "
        "hot context reflecting it; 0 skips it",
        type=int,
    )
    env_option(
        runs,
        "--edit-seconds",
        env="GLYPHOXA_BENCH_EDIT_SECONDS",
        help="seconds of entity edits, one a second, while FAST, STANDARD and DEEP calls run; "
        "0 skips it",
        type=float,
    )
    env_option(
        runs,
        "--tier",
        env="GLYPHOXA_BENCH_TIER",
        help="FAST, STANDARD or DEEP",
        type=str.upper,
    )
    runs.add_argument("--json", type=Path, metavar="PATH", help="also write every figure as JSON")
    _add_database_options(bench)
    bench.set_defaults(run=run_bench_command)
    # `bench` alone stays the latency bench; `bench load` is the one mode under it.
    modes = bench.add_subparsers(title="modes", metavar="MODE")
    _register_load(modes)


def _add_dataset_options(parser: argparse.ArgumentParser) -> None:
    sizes = parser.add_argument_group("dataset")
    env_option(
        sizes,
        "--scale",
        env="GLYPHOXA_BENCH_SCALE",
        help="the reference sizes times this factor, e.g. 0.01",
        type=float,
    )
    for count in COUNTS:
        sizes.add_argument(
            f"--{count}", type=int, metavar="N", help=f"number of {count} (overrides --scale)"
        )
    env_option(sizes, "--seed", env="GLYPHOXA_BENCH_SEED", help="generator seed", type=int)


def _add_database_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_argument_group("database (default: a temporary embedded server)")
    # Not GLYPHOXA_DSN / GLYPHOXA_DATA_DIR: a benchmark must not land in the real memory
    # because those happen to be set.
    env_option(
        where,
        "--dsn",
        env="GLYPHOXA_BENCH_DSN",
        help="benchmark in this PostgreSQL (campaign 'bench')",
        metavar="URL",
    )
    env_option(
        where,
        "--data-dir",
        env="GLYPHOXA_BENCH_DATA_DIR",
        help="keep the embedded server here, and reuse its loaded dataset next time",
        metavar="DIR",
    )
    where.add_argument(
        "--replace",
        action="store_true",
        help="delete a 'bench' campaign holding another dataset instead of stopping",
    )


def _register_load(modes: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from glyphoxa_mcp.bench.load import (
        CLIENTS_PER_PROCESS,
        LOOPBACK,
        MAX_CLIENT_PROCESSES,
        MAX_CLIENTS,
        MAX_SECONDS,
    )

    load = modes.add_parser(
        "load",
        help="many MCP clients at once over streamable HTTP, on loopback",
        description="Serves the synthetic campaign over HTTP as `serve --transport http` does "
        "(bearer tokens, the STANDARD tier's deadline) on a free loopback port in a process of "
        "its own, and has --clients MCP clients in processes of their own, spread over the DM "
        "and a "
        "table's NPCs, call the four tools back to back for --seconds. Prints calls, calls/s, "
        "errors and client-observed p50/p95/p99 per tool against the deadline, the CPU per "
        "answered call of `serve`, PostgreSQL and the clients, and the bench's yardstick rows.",
    )
    _add_dataset_options(load)
    runs = load.add_argument_group("load")
    env_option(
        runs,
        "--clients",
        env="GLYPHOXA_BENCH_CLIENTS",
        help=f"concurrent clients, 1 to {MAX_CLIENTS}",
        type=int,
    )
    env_option(
        runs,
        "--seconds",
        env="GLYPHOXA_BENCH_SECONDS",
        help=f"how long they call, 1 to {MAX_SECONDS}",
        type=int,
    )
    env_option(
        runs,
        "--tiers",
        env="GLYPHOXA_BENCH_TIERS",
        help="the clients' tiers in turn, comma-separated, e.g. FAST,STANDARD,DEEP (a FAST "
        "client calls query_entities only)",
    )
    runs.add_argument(
        "--client-processes",
        type=int,
        metavar="N",
        help=f"processes the clients are dealt over, 1 to {MAX_CLIENT_PROCESSES} (default: "
        f"one per {CLIENTS_PER_PROCESS} clients; a client's own event loop is part of every "
        "latency it records)",
    )
    runs.add_argument(
        "--host", default=LOOPBACK, help=f"loopback address to serve on (default: {LOOPBACK})"
    )
    runs.add_argument("--json", type=Path, metavar="PATH", help="also write every figure as JSON")
    _add_database_options(load)
    load.set_defaults(run=run_load_command)


def _flag(field: str) -> str:
    return "--" + field.replace("_", "-")


def settings_of(args: argparse.Namespace) -> BenchSettings:
    """Validated settings, or an error naming the flag and what is wrong with it."""
    # The benchmark imports the MCP SDK (about a second); other commands don't pay for it.
    from glyphoxa_mcp.bench.runner import BenchSettings
    from glyphoxa_mcp.bench.spec import DatasetSpec
    from glyphoxa_mcp.domain.tiers import Tier

    if args.dsn and args.data_dir:
        raise InvalidInputError("Give --dsn or --data-dir, not both.", field="--dsn")
    try:
        spec = DatasetSpec.at_scale(
            args.scale, seed=args.seed, **{count: getattr(args, count) for count in COUNTS}
        )
        dsn = DatabaseSettings(dsn=args.dsn).dsn if args.dsn else None
        tier = Tier(args.tier)
    except ValidationError as exc:
        raise InvalidInputError(_describe(exc)) from None
    except ValueError as exc:
        raise InvalidInputError(f"Invalid setting: {exc}.") from None
    _check_json(args.json)
    try:
        return BenchSettings(
            spec=spec,
            samples=args.samples,
            warmup=args.warmup,
            ingest_utterances=args.ingest_utterances,
            live_lines=args.live_lines,
            scene_changes=args.scene_changes,
            edit_seconds=args.edit_seconds,
            tier=tier,
            dsn=dsn,
            data_dir=Path(args.data_dir).expanduser() if args.data_dir else None,
            replace=args.replace,
        )
    except ValidationError as exc:
        raise InvalidInputError(_describe(exc)) from None


def _check_json(path: Path | None) -> None:
    if path is not None and not path.parent.is_dir():
        raise InvalidInputError(
            f"--json {path}: the folder {path.parent} does not exist.", field="--json"
        )


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        prefix = f"{_flag(where)}: " if where else ""
        problems.append(f"{prefix}{rule_of(error)}")
    return "Invalid setting: " + "; ".join(problems)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def run_bench_command(args: argparse.Namespace) -> int:
    from glyphoxa_mcp.bench.report import (
        EDITS_HEADERS,
        INGESTION_HEADERS,
        LATENCY_HEADERS,
        LIVE_HEADERS,
        SCENE_HEADERS,
        edits_rows,
        ingestion_rows,
        latency_rows,
        live_rows,
        scene_rows,
    )
    from glyphoxa_mcp.bench.runner import run_bench

    settings = settings_of(args)
    report = await run_bench(settings, _say)
    rows = report.dataset.rows
    print(
        f"Dataset: {', '.join(f'{count:,} {table}' for table, count in rows.items())} "
        f"(seed {report.dataset.spec.seed})"
    )
    load = report.dataset.load
    print(
        f"Generated in {report.dataset.generate_s:.1f} s; "
        + (f"loaded in {load.total_s:.1f} s." if load else "reused an earlier load.")
    )
    machine = report.machine
    print(
        f"Machine: {machine.cpus} CPUs ({machine.cpu_model}), {machine.memory_gib} GiB, "
        f"load {machine.load_average} to {machine.load_average_end}; "
        f"PostgreSQL {report.database.server_version}, "
        f"pgvector {report.database.pgvector_version}; tier {report.tier}; "
        f"{report.samples} samples after {report.warmup} warm-up calls.\n"
    )
    print(
        "Latency in ms. server-side: the server's own handling of the request; in-process:\n"
        "around the SDK client's call on the server in this process; stdio: around the same\n"
        "client's call to a `serve` subprocess, each right after the same call in process.\n"
        "Searches use precomputed query vectors except in the '+ embedding' rows, where the\n"
        "offline model embeds the query (stdio always).\n"
        "Each is judged against a figure of this run: a tool's or the hot resource's\n"
        "server-side p95 against its floor ('floor: ...': the bare SQL statements fetching the\n"
        "rows it returned, in the same scope); the BM25 leg (our word ranking alone) against\n"
        "bm25s over the same passages in memory (and shown beside tantivy's, with the\n"
        "ratio); the meaning leg against a bare HNSW top-k.\n"
        "The benchmarked NPC's rows, read under the witness rule, are also held to its\n"
        "companion's (told the same secrets, present in every scene: the rows without the\n"
        "rule), measured call by call in turn with them.\n"
        "CPU in ms per call (bench: this process, which runs the in-process servers and every\n"
        "client; pg: every process of the PostgreSQL server), from the operating system's\n"
        "counters read around each timed call of the in-process row (stdio when there is none).\n"
    )
    print_table(LATENCY_HEADERS, latency_rows(report))
    for note in report.cpu_notes:
        print(f"\nNote: {note}")
    for m in report.measurements:
        if m.over_deadline:
            print(
                f"\nNote: {m.over_deadline} of {counted(m.latency.samples, 'call')} of "
                f"{m.operation} "
                f"({m.scope}, {m.mode}) took longer than the {report.tier} tier's deadline; a "
                "server would have cancelled them."
            )
    if report.ingestion is not None:
        print(f"\nIngestion (ingest + process, embedder {report.ingestion.embedder}):\n")
        print_table(INGESTION_HEADERS, ingestion_rows(report.ingestion))
    live = report.live_recording
    if live is not None:
        print(
            f"\nLive recording ({live.lines} lines appended one at a time through the recorder "
            f"into a session of {live.session_lines_before}; latency in ms):\n"
        )
        print_table(LIVE_HEADERS, live_rows(live))
    scenes = report.scene_changes
    if scenes is not None:
        print(
            f"\nWho was present changed ({scenes.changes} changes to the scene being played in "
            f"{scenes.session_id}; latency in ms):\n"
        )
        print_table(SCENE_HEADERS, scene_rows(scenes))
    edits = report.edits_under_load
    if edits is not None:
        print(
            f"\nEntities edited while calls ran ({edits.edits} edits in {edits.seconds:g} s, "
            f"{edits.target}: {'meets' if edits.meets else 'MISSES'}):\n"
        )
        print_table(EDITS_HEADERS, edits_rows(edits))
    if args.json is not None:
        args.json.write_text(report.model_dump_json(indent=2) + "\n")
        print(f"\nWrote {args.json}")
    return 0


def load_settings_of(args: argparse.Namespace) -> LoadSettings:
    """Validated settings of `bench load`, or an error naming the flag."""
    from glyphoxa_mcp.bench.load import LoadSettings
    from glyphoxa_mcp.bench.spec import DatasetSpec
    from glyphoxa_mcp.domain.tiers import Tier

    if args.dsn and args.data_dir:
        raise InvalidInputError("Give --dsn or --data-dir, not both.", field="--dsn")
    _check_json(args.json)
    try:
        spec = DatasetSpec.at_scale(
            args.scale, seed=args.seed, **{count: getattr(args, count) for count in COUNTS}
        )
        dsn = DatabaseSettings(dsn=args.dsn).dsn if args.dsn else None
        return LoadSettings(
            spec=spec,
            tiers=tuple(Tier(t.strip().upper()) for t in str(args.tiers).split(",")),
            clients=args.clients,
            client_processes=args.client_processes,
            seconds=args.seconds,
            host=args.host,
            dsn=dsn,
            data_dir=Path(args.data_dir).expanduser() if args.data_dir else None,
            replace=args.replace,
        )
    except ValidationError as exc:
        raise InvalidInputError(_describe(exc)) from None
    except ValueError as exc:
        raise InvalidInputError(f"Invalid setting: {exc}.") from None


async def run_load_command(args: argparse.Namespace) -> int:
    from glyphoxa_mcp.bench.load import (
        ALL_TOOLS,
        LOAD_HEADERS,
        OUTCOME_HEADERS,
        load_rows,
        outcome_rows,
    )
    from glyphoxa_mcp.bench.load_report import (
        CPU_HEADERS,
        YARDSTICK_HEADERS,
        cpu_per_call_cell,
        cpu_rows,
        yardstick_rows,
    )
    from glyphoxa_mcp.bench.load_run import run_load

    settings = load_settings_of(args)
    report = await run_load(settings, _say)
    rows = report.dataset.rows
    print(
        f"Dataset: {', '.join(f'{count:,} {table}' for table, count in rows.items())} "
        f"(seed {report.dataset.spec.seed})"
    )
    machine = report.machine
    print(
        f"Machine: {machine.cpus} CPUs ({machine.cpu_model}), {machine.memory_gib} GiB, "
        f"load {machine.load_average} to {machine.load_average_end}; "
        f"PostgreSQL {report.database.server_version}, "
        f"pgvector {report.database.pgvector_version}.\n"
    )
    viewers = len(set(report.viewers))
    print(
        f"{counted(report.clients, 'client')} over streamable HTTP on loopback "
        f"({counted(viewers, 'viewer')}: the DM and {counted(viewers - 1, 'NPC')}; bearer "
        f"tokens; tier {report.tier}), calling back to back for "
        f"{report.seconds} s ({report.elapsed_s:.1f} s until the last call ended); "
        f"{counted(report.reconnects, 'session')} opened again. Latency in ms, as the clients "
        "saw it.\n"
        "CPU in ms per call answered without error (error answers, busy refusals and failed\n"
        "calls are charged to the answered ones), from the operating system's counters at the\n"
        "start and the end of the run: `serve`, PostgreSQL (every process of the server) and\n"
        f"the clients ({counted(report.client_processes, 'process', 'processes')} of theirs, "
        "and this one, which waits).\n"
    )
    print_table(LOAD_HEADERS, load_rows(report.tools, cpu_per_call_cell(report)))
    if report.cpu_ms:
        print(f"\nCPU over the run ({counted(report.cpu_calls, 'answered call')}):\n")
        print_table(CPU_HEADERS, cpu_rows(report))
    for note in report.cpu_notes:
        print(f"\nNote: {note}")
    print(
        "\nBy tier (in time: answered without error within the tier's deadline; busy refusals "
        "answered within 50 ms count as answered in time, calls cancelled at a deadline do not):"
        "\n"
    )
    print_table(("tier", *OUTCOME_HEADERS), outcome_rows(report.tiers))
    print()
    print_table(("tool", *OUTCOME_HEADERS), outcome_rows(report.tools))
    first = [
        (row.tool, m) for row in report.tools if row.tool != ALL_TOOLS for m in row.first_errors
    ]
    if first:
        print("\nFirst errors of each tool:")
        for tool, message in first:
            print(f"  {tool}: {message}")
    if report.server_log:
        print("\nThe server's log (warm-up included), by kind:")
        for kind, count in list(report.server_log.items())[:SERVER_LOG_SHOWN]:
            print(f"  {count:>6} x {kind}")
    print()
    print_table(YARDSTICK_HEADERS, yardstick_rows(report))
    if (lag := report.client_loop_lag) is not None:
        print(
            f"\nThe clients' event loop ran its timers late by {lag.p50_ms:.1f} / "
            f"{lag.p95_ms:.1f} / {lag.p99_ms:.1f} ms (p50 / p95 / p99): the clients' latencies "
            "include it."
        )
    verdict = "meets" if report.meets else "MISSES"
    calls = sum(row.calls for row in report.tiers)
    in_target = sum(row.answered_in_time + row.refused_within_50ms for row in report.tiers)
    print(
        "\nTarget: every call answered within its tier's deadline or refused as busy within "
        f"50 ms, as the clients saw it, none cancelled at a deadline: {verdict} "
        f"({in_target:,} of {calls:,} calls, {in_target / max(calls, 1):.1%})."
    )
    if args.json is not None:
        args.json.write_text(report.model_dump_json(indent=2) + "\n")
        print(f"\nWrote {args.json}")
    return 0
