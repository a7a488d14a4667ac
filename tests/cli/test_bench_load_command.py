"""`glyphoxa-mcp bench load` as a user runs it: a few clients for a few seconds against a tiny
campaign. Figures are never asserted, only that real calls were made and counted, with no
errors but busy refusals (on a loaded machine admission control may refuse some, which is
its job), and that the run cleans up after itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

import asyncpg
import pytest

from glyphoxa_mcp.bench import load_clients
from glyphoxa_mcp.bench.load import ALL_TOOLS, TOOL_MIX
from tests.cli.runner import run_in_process
from tests.cli.test_bench_command import TINY

TINY_DATASET = TINY[: TINY.index("--samples")]


@pytest.mark.e2e
async def test_bench_load_drives_clients_over_http_and_reports_every_tool(
    empty_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report_file = tmp_path / "load.json"
    # The client processes' records are waited for from the clock's end, not its start.
    monkeypatch.setattr(load_clients, "DONE_WITHIN_S", 2.5)
    result = run_in_process(
        "bench",
        "load",
        *TINY_DATASET,
        *("--clients", "3", "--client-processes", "2", "--seconds", "3"),
        *("--dsn", empty_database, "--json", str(report_file)),
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(report_file.read_text())
    rows = {row["tool"]: row for row in report["tools"]}
    assert list(rows) == [*TOOL_MIX, ALL_TOOLS]  # no reconnect row: no session broke
    for tool in TOOL_MIX:
        row = rows[tool]
        assert row["calls"] > 0, tool
        assert row["exceptions"] == 0 and set(row["errors_by_kind"]) <= {"busy"}, row
        assert row["errors"] == sum(row["errors_by_kind"].values()), row
        latency = row["latency"]
        assert latency["samples"] == row["calls"]
        assert 0 < latency["min_ms"] <= latency["p50_ms"] <= latency["p95_ms"]
        assert latency["p95_ms"] <= latency["p99_ms"] <= latency["max_ms"]
    every = rows[ALL_TOOLS]
    assert every["calls"] == sum(rows[tool]["calls"] for tool in TOOL_MIX)
    assert report["elapsed_s"] >= 3 and report["reconnects"] == 0
    # Both figures are rounded in the report.
    assert every["calls_per_s"] == pytest.approx(every["calls"] / report["elapsed_s"], rel=0.01)
    assert report["deadline_ms"] == 1000 and report["tier"] == "STANDARD"
    # The clients ran in two processes of their own, and every one's calls were gathered.
    assert report["client_processes"] == 2 and "2 processes of theirs" in result.stdout
    [dm, *npcs] = report["viewers"]
    assert dm == "dm" and len(npcs) == 2 and all(v.startswith("npc:") for v in npcs)
    for moment in ("yardstick_before", "yardstick_after"):
        assert [m["operation"] for m in report[moment]] == [
            "SELECT 1 (pool round trip)",
            "query embedding (offline model)",
        ]
    # CPU over the run, read for each process (the test server runs on this machine), per
    # call answered without error.
    assert report["cpu_notes"] == []
    answered = sum(rows[tool]["calls"] - rows[tool]["errors"] for tool in TOOL_MIX)
    assert report["cpu_calls"] == answered
    assert list(report["cpu_ms_per_call"]) == ["serve", "postgres", "clients"]
    for process, spent in report["cpu_ms"].items():
        assert spent > 0, process
        per_call = report["cpu_ms_per_call"][process]
        assert per_call == pytest.approx(spent / answered, rel=0.01, abs=0.001)
    assert "cpu ms per answered call" in result.stdout
    # The server's log was read: nothing went wrong there either.
    assert not [kind for kind in report["server_log"] if kind.startswith(("ERROR", "CRITICAL"))]
    assert not [kind for kind in report["server_log"] if "deadline" in kind]
    assert ALL_TOOLS in result.stdout and "SELECT 1 (pool round trip)" in result.stdout
    # The verdict counts every call against the target (a loaded test machine may miss it).
    target = re.search(
        r"none cancelled at a deadline: (meets|MISSES) \(([\d,]+) of ([\d,]+)", result.stdout
    )
    assert target is not None, result.stdout
    assert int(target[3].replace(",", "")) == every["calls"]
    assert (target[1] == "meets") == (int(target[2].replace(",", "")) == every["calls"])
    # The tokens made for the run no longer open anything.
    conn = await asyncpg.connect(empty_database)
    try:
        tokens = await conn.fetch("SELECT label, revoked_at FROM access_tokens")
    finally:
        await conn.close()
    assert len(tokens) == 3
    assert all(t["label"] == "bench load" and t["revoked_at"] is not None for t in tokens)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--clients", "0"], "--clients: Input should be greater than or equal to 1"),
        (["--clients", "257"], "--clients: Input should be less than or equal to 256"),
        (["--seconds", "0"], "--seconds: Input should be greater than or equal to 1"),
        (
            ["--client-processes", "0"],
            "--client-processes: Input should be greater than or equal to 1",
        ),
        (["--seconds", "601"], "--seconds: Input should be less than or equal to 600"),
        (["--host", "0.0.0.0"], "--host: '0.0.0.0' is not a loopback address"),
        (["--json", "/nonexistent/folder/load.json"], "--json /nonexistent/folder/load.json"),
        (["--dsn", "postgresql://x@y/z", "--data-dir", "/tmp/x"], "--dsn or --data-dir"),
        (["--scale", "0"], "scale must be above 0"),
    ],
)
def test_bad_settings_stop_with_one_line_naming_the_flag(args: list[str], message: str) -> None:
    result = run_in_process("bench", "load", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_bench_alone_is_still_the_latency_bench_and_load_is_its_mode() -> None:
    from glyphoxa_mcp.cli import build_parser
    from glyphoxa_mcp.cli.bench_command import run_bench_command, run_load_command

    parser = build_parser()
    alone = parser.parse_args(["bench", "--samples", "3", "--tier", "deep"])
    assert alone.run is run_bench_command and (alone.samples, alone.tier) == (3, "DEEP")
    load = parser.parse_args(["bench", "load", "--clients", "4", "--seconds", "5"])
    assert load.run is run_load_command and (load.clients, load.seconds) == (4, 5)
