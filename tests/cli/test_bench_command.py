"""`glyphoxa-mcp bench` as a user runs it, at a tiny scale: figures are never asserted, only
that every operation is measured and reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import run_in_process
from tests.cli.test_db_commands import run_cli

TINY = [
    *("--sessions", "2", "--entries", "60", "--entities", "30"),
    *("--relationships", "40", "--facts", "20"),
    *("--samples", "3", "--warmup", "1", "--ingest-utterances", "12", "--live-lines", "3"),
    *("--edit-seconds", "2"),
    # The longest deadline: a loaded test machine must not turn a slow call into a failure.
    *("--tier", "DEEP"),
]
SCOPE_CHANGE = "scope change applied after an entity change"
WORD_LEG = "BM25 leg (SemanticIndex.search_text + SessionLog.search)"
WORD_PEER = "peer: bm25s (passages + utterances, in memory)"
TANTIVY_PEER = "peer: tantivy (passages + utterances, in memory, stemmed, stop words out)"
MEANING_LEG = "meaning leg (SemanticIndex.nearest)"
MEANING_FLOOR = "floor: HNSW top-k (chunks)"
TOOLS = [
    "memory.query_entities",
    "memory.get_session_summary",
    "memory.search_facts",
    "memory.search_sessions",
    "glyphoxa://npc/{npc_id}/hot",
]


@pytest.mark.e2e
def test_bench_prints_every_operation_and_writes_the_figures_as_json(
    empty_database: str, tmp_path: Path
) -> None:
    report_file = tmp_path / "bench.json"
    result = run_cli("bench", *TINY, "--dsn", empty_database, "--json", str(report_file))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(report_file.read_text())
    # The benchmarked NPC under the witness rule, and its companion who hears every line.
    npcs = {m["scope"] for m in report["measurements"] if m["scope"].startswith("npc:")}
    assert len(npcs) == 2
    measured = {(m["operation"], m["scope"], m["mode"]) for m in report["measurements"]}
    searches = ("memory.search_facts", "memory.search_sessions")
    for scope in ("dm", *sorted(npcs)):
        for tool in TOOLS:
            assert {(tool, scope, "server-side"), (tool, scope, "in-process")} <= measured
            stdio = f"{tool} + embedding" if tool in searches else tool
            assert (stdio, scope, "stdio") in measured
        for search in searches:
            for mode in ("server-side", "in-process", "stdio"):
                assert (f"{search} + embedding", scope, mode) in measured
        # Each tool's floor, in the same scope; the tool's server-side row is held to it.
        for tool in TOOLS:
            assert (f"floor: {tool}", scope, "in-process") in measured
            [judged] = [
                m
                for m in report["measurements"]
                if (m["operation"], m["scope"], m["mode"]) == (tool, scope, "server-side")
            ]
            assert judged["target"] == "p95 <= 2 x floor p95"
            assert isinstance(judged["meets"], bool)
            assert judged["floor"]["operation"] == f"floor: {tool}"
            assert judged["floor"]["p95_ms"] >= 0
    assert ("SELECT 1 (pool round trip)", "-", "in-process") in measured
    assert ("query embedding (offline model)", "-", "in-process") in measured
    # The tiny campaign has 30 entities: both name-correction rows know all of them.
    assert ("name correction (30 entities)", "-", "in-process") in measured
    assert (SCOPE_CHANGE, "-", "in-process") in measured
    rankings = {m["operation"]: m for m in report["measurements"] if m["scope"] == "-"}
    for ranking in (WORD_LEG, WORD_PEER, TANTIVY_PEER, MEANING_LEG, MEANING_FLOOR):
        assert ranking in rankings
    assert rankings[WORD_LEG]["peer"]["operation"] == WORD_PEER
    assert rankings[WORD_LEG]["tantivy"]["operation"] == TANTIVY_PEER
    assert rankings[WORD_LEG]["tantivy_ratio"] > 0
    assert rankings[WORD_LEG]["target"] == "p95 <= 1.5 x peer p95"
    assert rankings[MEANING_LEG]["floor"]["operation"] == MEANING_FLOOR
    assert rankings[SCOPE_CHANGE]["target"] == "p95 <= 20 ms"
    # The test server runs on this machine: PostgreSQL's CPU is read beside the bench's own.
    assert report["cpu_notes"] == []
    for m in report["measurements"]:
        latency = m["latency"]
        assert latency["samples"] == (5 if m["operation"] == SCOPE_CHANGE else 3)
        assert latency["min_ms"] <= latency["p50_ms"] <= latency["p95_ms"] <= latency["max_ms"]
        cpu = m["cpu_ms_per_call"]
        assert set(cpu) == {"bench", "postgres"} and cpu["bench"] >= 0 <= cpu["postgres"], m
    # A tool called in process costs this process CPU, every call.
    in_process = [m for m in report["measurements"] if m["mode"] == "in-process"]
    assert all(m["cpu_ms_per_call"]["bench"] > 0 for m in in_process if m["operation"] in TOOLS)
    assert report["dataset"]["rows"]["session_entries"] == 60
    assert report["dataset"]["rows"]["relationships"] == 40
    assert report["ingestion"]["utterances"] == 12
    assert report["ingestion"]["embedder_share"] > 0
    assert report["ingestion"]["target"] == "embedder share >= 0.5"
    assert isinstance(report["ingestion"]["meets"], bool)
    live = report["live_recording"]
    assert (live["lines"], live["session_lines_before"]) == (3, 500)
    for measure in ("append", "hot_notification", "searchable"):
        assert live[measure]["samples"] == 3
    assert live["append"]["p50_ms"] <= live["searchable"]["p50_ms"]
    edits = report["edits_under_load"]
    assert edits["edits"] >= 1
    assert {t["tier"] for t in edits["tiers"]} == {"FAST", "STANDARD", "DEEP"}
    assert edits["meets"] == (sum(t["failed_after_edit"] for t in edits["tiers"]) == 0)
    assert edits["target"].startswith("no call of any tier fails")
    assert report["machine"]["cpus"] >= 1
    table = result.stdout
    for tool in TOOLS:
        assert table.count(tool) >= 2  # one row per scope
    assert "memory.search_sessions + embedding" in table
    assert "SELECT 1 (pool round trip)" in table and "utterances/s" in table
    assert "x floor)" in table and "x bm25s; " in table and "x tantivy)" in table
    assert TANTIVY_PEER in table and "embedder share" in table
    assert "cpu ms/call bench / pg" in table
    assert "Entities edited while calls ran" in table
    assert "append -> hot notification" in table and "append -> found by search" in table

    again = run_cli(
        "bench", *TINY, "--dsn", empty_database,
        *("--ingest-utterances", "0", "--live-lines", "0", "--edit-seconds", "0"),
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "reused an earlier load" in again.stdout and "utterances/s" not in again.stdout
    # In process: refused before anything runs, no process start needed to see it.
    other = run_in_process("bench", *TINY, "--seed", "2", "--dsn", empty_database)
    assert other.returncode == 2 and "--replace" in other.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scale", "0"], "scale must be above 0"),
        (["--relationships", "999999", "--entities", "30"], "too many for 30 entities"),
        (["--samples", "0"], "--samples: Input should be greater than or equal to 1"),
        (["--json", "/nonexistent/folder/bench.json"], "--json /nonexistent/folder/bench.json"),
        (["--dsn", "postgresql://x@y/z", "--data-dir", "/tmp/x"], "--dsn or --data-dir"),
        (["--dsn", "mysql://x"], "must start with postgresql://"),
        (["--tier", "FASTEST"], "FASTEST"),
    ],
)
def test_bad_settings_stop_before_anything_runs(args: list[str], message: str) -> None:
    result = run_in_process("bench", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_without_the_bench_extra_the_bench_stops_at_once_saying_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from glyphoxa_mcp.bench import peers

    monkeypatch.setattr(peers, "PEER_MODULES", ("glyphoxa_no_such_module",))
    # Nothing listens there: the check comes before any database is reached.
    result = run_in_process("bench", *TINY, "--dsn", "postgresql://nobody@127.0.0.1:9/none")
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.endswith("pip install 'glyphoxa-mcp[bench]'")


def test_the_default_warmup_is_one_pass_over_every_argument_set() -> None:
    from glyphoxa_mcp.bench.workload import VARIANTS
    from glyphoxa_mcp.cli import build_parser

    assert int(build_parser().parse_args(["bench"]).warmup) == VARIANTS
