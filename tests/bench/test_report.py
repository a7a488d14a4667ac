from __future__ import annotations

import json

import pytest

from glyphoxa_mcp.bench.ingestion import embedder_share
from glyphoxa_mcp.bench.operations import (
    MEANING_FLOOR,
    MEANING_LEG,
    SCOPE_REBUILD,
    TANTIVY_PEER,
    WORD_LEG,
    WORD_PEER,
    floor_name,
)
from glyphoxa_mcp.bench.report import (
    LATENCY_HEADERS,
    BenchReport,
    Measurement,
    held_to,
    judged,
    latency_rows,
    verdict,
)
from glyphoxa_mcp.bench.timing import Summary

TOOL = "memory.get_session_summary"
TARGET, CPU, VERDICT = (
    LATENCY_HEADERS.index(name) for name in ("target", "cpu ms/call bench / pg", "verdict")
)


def _measured(operation: str, mode: str, p50: float, p95: float, scope: str = "dm") -> Measurement:
    latency = Summary(
        samples=200, p50_ms=p50, p95_ms=p95, p99_ms=p95, mean_ms=p50, min_ms=p50, max_ms=p95
    )
    return Measurement(operation=operation, scope=scope, mode=mode, latency=latency)


def _report(*measurements: Measurement) -> BenchReport:
    return BenchReport.model_construct(measurements=judged(list(measurements)))


@pytest.mark.parametrize(
    ("p95", "floor", "factor", "ratio", "meets"),
    [
        (2.0, 1.0, 2.0, 2.0, True),  # at the boundary: met
        (2.001, 1.0, 2.0, 2.001, False),
        (1.5, 1.0, 1.5, 1.5, True),
        (1.6, 1.0, 1.5, 1.6, False),
        (0.5, 1.0, 2.0, 0.5, True),
    ],
)
def test_a_p95_is_held_to_a_multiple_of_its_reference(
    p95: float, floor: float, factor: float, ratio: float, meets: bool
) -> None:
    assert held_to(p95, floor, factor) == (ratio, meets)


def test_a_reference_below_the_clocks_resolution_is_met_only_by_nothing() -> None:
    assert held_to(0.0, 0.0, 2.0) == (1.0, True)
    assert held_to(0.1, 0.0, 2.0)[1] is False


def test_a_tools_server_side_row_is_held_to_twice_its_floor_in_the_same_scope() -> None:
    measurements = judged(
        [
            _measured(TOOL, "server-side", 1.0, 3.0),
            _measured(TOOL, "in-process", 2.0, 4.0),
            _measured(TOOL, "server-side", 1.0, 3.0, scope="npc:a"),
            _measured(floor_name(TOOL), "in-process", 0.5, 1.0),
            _measured(floor_name(TOOL), "in-process", 0.5, 2.0, scope="npc:a"),
        ]
    )
    dm, in_process, npc = measurements[:3]
    assert (dm.target, dm.meets, dm.ratio) == ("p95 <= 2 x floor p95", False, 3.0)
    assert dm.floor is not None and dm.floor.model_dump() == {
        "operation": floor_name(TOOL),
        "p95_ms": 1.0,
    }
    assert (npc.meets, npc.ratio) == (True, 1.5)
    # The in-process row and the floors themselves have no target.
    assert all(m.target is None and m.meets is None for m in (in_process, *measurements[3:]))


def test_the_rankings_are_held_to_their_peer_and_floor_and_a_scope_change_to_20_ms() -> None:
    word, _, meaning, _, scope = judged(
        [
            _measured(WORD_LEG, "in-process", 1.0, 1.5, scope="-"),
            _measured(WORD_PEER, "in-process", 0.5, 1.0, scope="-"),
            _measured(MEANING_LEG, "in-process", 1.0, 3.0, scope="-"),
            _measured(MEANING_FLOOR, "in-process", 0.5, 1.0, scope="-"),
            _measured(SCOPE_REBUILD, "in-process", 10.0, 20.0, scope="-"),
        ]
    )
    assert (word.target, word.meets, word.ratio) == ("p95 <= 1.5 x peer p95", True, 1.5)
    assert word.peer is not None and word.peer.operation == WORD_PEER and word.floor is None
    assert (meaning.meets, meaning.ratio) == (False, 3.0)
    assert meaning.floor is not None and meaning.floor.operation == MEANING_FLOOR
    assert (scope.target, scope.meets) == ("p95 <= 20 ms", True)
    over = judged([_measured(SCOPE_REBUILD, "in-process", 10.0, 20.5, scope="-")])
    assert over[0].meets is False


def test_a_row_whose_floor_was_not_measured_has_no_verdict() -> None:
    [alone] = judged([_measured(TOOL, "server-side", 1.0, 3.0)])
    assert alone.target is None and alone.meets is None


def test_the_verdict_column_gives_the_ratio_and_the_stdio_overhead() -> None:
    report = _report(
        _measured(TOOL, "server-side", 1.0, 3.1),
        _measured(TOOL, "in-process", 5.0, 6.0),
        _measured(TOOL, "stdio", 6.0, 7.0),
        _measured(floor_name(TOOL), "in-process", 0.5, 1.0),
    )
    assert verdict(report, TOOL, "dm") == "MISSES (3.1x floor); overhead meets"
    assert verdict(report, floor_name(TOOL), "dm") == ""
    [tool_row, floor_row] = latency_rows(report)
    assert tool_row[TARGET] == "p95 <= 2 x floor p95" and floor_row[TARGET] == "-"
    peer = _report(
        _measured(WORD_LEG, "in-process", 1.0, 1.2, scope="-"),
        _measured(WORD_PEER, "in-process", 0.5, 1.0, scope="-"),
    )
    assert verdict(peer, WORD_LEG, "-") == "meets (1.2x bm25s)"


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


def test_the_json_of_a_judged_row_says_its_target_floor_and_verdict() -> None:
    [tool, _floor] = judged(
        [
            _measured(TOOL, "server-side", 1.0, 1.8),
            _measured(floor_name(TOOL), "in-process", 0.5, 1.0),
        ]
    )
    written = json.loads(tool.model_dump_json())
    assert written["target"] == "p95 <= 2 x floor p95"
    assert written["meets"] is True
    assert written["floor"] == {"operation": floor_name(TOOL), "p95_ms": 1.0}
    assert written["ratio"] == 1.8


def test_the_word_ranking_is_reported_beside_tantivy_its_verdict_still_bm25s() -> None:
    measurements = [
        _measured(WORD_LEG, "in-process", 1.0, 1.2, scope="-"),
        _measured(WORD_PEER, "in-process", 0.5, 1.0, scope="-"),
        _measured(TANTIVY_PEER, "in-process", 0.2, 0.4, scope="-"),
    ]
    report = _report(*measurements)
    word, bm25s, tantivy = report.measurements
    assert (word.target, word.meets, word.ratio) == ("p95 <= 1.5 x peer p95", True, 1.2)
    assert word.peer is not None and word.peer.operation == WORD_PEER
    written = json.loads(word.model_dump_json())
    assert written["tantivy"] == {"operation": TANTIVY_PEER, "p95_ms": 0.4}
    assert written["tantivy_ratio"] == 3.0
    # The peers themselves are not judged, and tantivy's row judges nothing: only beside.
    assert all(m.target is None and m.tantivy is None for m in (bm25s, tantivy))
    assert verdict(report, WORD_LEG, "-") == "meets (1.2x bm25s; 3.0x tantivy)"
    rows = {row[0]: row for row in latency_rows(report)}
    assert rows[TANTIVY_PEER][3] == "0.20 / 0.40 / 0.40"
    assert rows[TANTIVY_PEER][6:] == ["-", "-", "-", ""]
    # A run without the tantivy row keeps the verdict as it was and the JSON without it.
    [alone, _] = judged(measurements[:2])
    assert alone.tantivy is None and alone.tantivy_ratio is None and alone.meets is True


@pytest.mark.parametrize(
    ("utterances_per_s", "passages_per_s", "share"),
    [(930.0, 5_900.0, 0.158), (2_950.0, 5_900.0, 0.5), (10.0, 0.0, 0.0)],
)
def test_the_embedder_share_is_ingestions_throughput_over_the_embedders(
    utterances_per_s: float, passages_per_s: float, share: float
) -> None:
    assert embedder_share(utterances_per_s, passages_per_s) == share


def test_an_npcs_rows_under_the_witness_rule_are_held_to_its_companions() -> None:
    witnessed, companion = "npc:darithas", "npc:zanelvik"
    measured = judged(
        [
            _measured(TOOL, "server-side", 2.0, 3.9, scope=witnessed),
            _measured(TOOL, "server-side", 2.0, 3.0, scope=companion),
            _measured("memory.search_sessions", "server-side", 5.0, 4.0, scope=witnessed),
            _measured("memory.search_sessions", "server-side", 5.0, 3.0, scope=companion),
            _measured(TOOL, "in-process", 2.5, 9.0, scope=witnessed),
            _measured(floor_name(TOOL), "in-process", 0.5, 1.0, scope=witnessed),
        ],
        without_rule={witnessed: companion},
    )
    summary, _, search, _, in_process, floor = measured
    assert (summary.rule_ratio, summary.rule_meets) == (1.3, True)  # at the boundary: met
    assert summary.without_rule is not None and summary.without_rule.scope == companion
    assert (search.rule_ratio, search.rule_meets) == (1.333, False)
    # Only the server-side tool rows of the witnessed scope; the floor's verdict stays.
    assert in_process.without_rule is None and floor.without_rule is None
    assert summary.ratio == 3.9 and summary.meets is False
    assert all(m.without_rule is None for m in measured if m.scope == companion)
    report = BenchReport.model_construct(measurements=measured)
    assert (
        verdict(report, TOOL, witnessed)
        == "MISSES (3.9x floor); witness rule meets (1.30x without)"
    )
    [row] = [r for r in latency_rows(report) if r[:2] == ["memory.search_sessions", witnessed]]
    assert row[TARGET] == "p95 <= 1.3 x without rule"
    assert row[VERDICT] == "witness rule MISSES (1.33x without)"


def test_the_cpu_per_call_of_the_in_process_calls_is_a_column_and_in_the_json() -> None:
    def costing(mode: str, bench: float, postgres: float | None) -> Measurement:
        return _measured(TOOL, mode, 1.0, 2.0).model_copy(
            update={"cpu_ms_per_call": {"postgres": postgres, "bench": bench}}
        )

    report = _report(
        costing("server-side", 1.5, 0.25),
        costing("in-process", 1.5, 0.25),
        costing("stdio", 0.75, 0.5),
        _measured(floor_name(TOOL), "in-process", 0.5, 1.0),
    )
    tool_row, floor_row = latency_rows(report)
    assert tool_row[CPU] == "1.50 / 0.25"
    assert floor_row[CPU] == "-"  # not read
    stdio_only = _report(costing("stdio", 0.75, None))
    assert latency_rows(stdio_only)[0][CPU] == "0.75 / -"
    document = json.loads(report.model_dump_json())
    assert [m["cpu_ms_per_call"] for m in document["measurements"]] == [
        {"bench": 1.5, "postgres": 0.25},
        {"bench": 1.5, "postgres": 0.25},
        {"bench": 0.75, "postgres": 0.5},
        None,
    ]
