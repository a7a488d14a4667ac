from __future__ import annotations

from glyphoxa_mcp.bench.report import BenchReport, Measurement, verdict
from glyphoxa_mcp.bench.timing import Summary


def _measured(operation: str, mode: str, p50: float, p95: float) -> Measurement:
    latency = Summary(
        samples=200, p50_ms=p50, p95_ms=p95, p99_ms=p95, mean_ms=p50, min_ms=p50, max_ms=p95
    )
    return Measurement(operation=operation, scope="dm", mode=mode, latency=latency)


def _report(*measurements: Measurement) -> BenchReport:
    return BenchReport.model_construct(measurements=list(measurements))


def test_a_row_with_a_latency_target_is_judged_by_it_and_by_its_overhead() -> None:
    tool = "memory.get_session_summary"
    fast = _report(
        _measured(tool, "server-side", 1.0, 2.0),
        _measured(tool, "in-process", 5.0, 6.0),
        _measured(tool, "stdio", 6.0, 7.0),
    )
    assert verdict(fast, tool, "dm") == "meets"
    slow = _report(_measured(tool, "server-side", 4.0, 9.0))
    assert verdict(slow, tool, "dm") == "MISSES"


def test_a_row_judged_only_by_its_stdio_overhead_says_so() -> None:
    # 300 ms at p95, but the only target that applies is the overhead: not a plain "meets".
    row = "memory.search_sessions + embedding"
    report = _report(
        _measured(row, "server-side", 40.0, 300.0),
        _measured(row, "in-process", 42.0, 302.0),
        _measured(row, "stdio", 43.0, 305.0),
    )
    assert verdict(report, row, "dm") == "overhead meets"
    assert verdict(_report(), "SELECT 1 (pool round trip)", "-") == ""
