"""`bench load`'s arithmetic: the rows made of every call's record, the verdict, the mix of
tools and the spread of clients over viewers. (pure)"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from pydantic import ValidationError

from glyphoxa_mcp.bench.load import (
    ALL_TOOLS,
    CONNECT,
    ERROR,
    EXCEPTION,
    FIRST_ERRORS,
    LOAD_HEADERS,
    MESSAGE_CHARS,
    OK,
    TOOL_MIX,
    CallRecord,
    LoadSettings,
    load_rows,
    log_counts,
    next_tool,
    tier_loads,
    tool_load,
    tool_loads,
    viewers_of,
)
from glyphoxa_mcp.bench.load_report import (
    LoadReport,
    cpu_per_call_cell,
    cpu_rows,
    yardstick_rows,
)
from glyphoxa_mcp.bench.report import Measurement
from glyphoxa_mcp.bench.timing import Summary

QUERY = "memory.query_entities"
FACTS = "memory.search_facts"
DEADLINE_MS = 1000


def ok(tool: str, ms: float) -> CallRecord:
    return CallRecord(tool, ms, OK)


def test_each_tool_gets_its_row_and_the_last_row_counts_them_all() -> None:
    records = [
        ok(QUERY, 10.0),
        ok(QUERY, 30.0),
        CallRecord(QUERY, 1000.5, ERROR, "took too long"),
        ok(FACTS, 20.0),
        CallRecord(FACTS, 3.0, EXCEPTION, "ReadError: closed"),
    ]
    rows = {row.tool: row for row in tool_loads(records, elapsed_s=2.0, deadline_ms=DEADLINE_MS)}
    assert list(rows) == [*TOOL_MIX, ALL_TOOLS]
    query, facts, every = rows[QUERY], rows[FACTS], rows[ALL_TOOLS]
    assert (query.calls, query.errors, query.exceptions, query.calls_per_s) == (3, 1, 0, 1.5)
    assert (facts.calls, facts.errors, facts.exceptions) == (2, 0, 1)
    assert (every.calls, every.errors, every.exceptions, every.calls_per_s) == (5, 1, 1, 2.5)
    assert rows["memory.get_session_summary"].calls == 0
    assert rows["memory.get_session_summary"].latency is None


def test_latency_counts_every_answer_error_answers_too_but_not_calls_that_got_none() -> None:
    records = [
        ok(QUERY, 10.0),
        CallRecord(QUERY, 990.0, ERROR, "cancelled at the deadline"),
        CallRecord(QUERY, 2.0, EXCEPTION, "ConnectError"),
    ]
    latency = tool_load(QUERY, records, 1.0, DEADLINE_MS).latency
    assert latency is not None
    assert (latency.samples, latency.min_ms, latency.max_ms) == (2, 10.0, 990.0)


@pytest.mark.parametrize(
    ("records", "meets"),
    [
        ([ok(QUERY, 5.0)] * 99 + [ok(QUERY, 1000.0)], True),  # p99 on the deadline
        ([ok(QUERY, 5.0)] * 98 + [ok(QUERY, 1500.0)] * 2, False),  # p99 past it
        ([ok(QUERY, 5.0)] * 99 + [CallRecord(QUERY, 5.0, ERROR, "no")], False),
        ([ok(QUERY, 5.0)] * 99 + [CallRecord(QUERY, 5.0, EXCEPTION, "no")], False),
        ([], False),  # no call at all proves nothing
    ],
)
def test_a_tool_meets_the_target_only_without_errors_and_with_p99_within_the_deadline(
    records: list[CallRecord], meets: bool
) -> None:
    assert tool_load(QUERY, records, 60.0, DEADLINE_MS).meets is meets


def test_the_first_distinct_messages_are_kept_in_order_and_cut_short() -> None:
    long = "x" * (MESSAGE_CHARS + 50)
    records = [
        CallRecord(QUERY, 1.0, ERROR, "first"),
        ok(QUERY, 1.0),
        CallRecord(QUERY, 1.0, EXCEPTION, "first"),
        CallRecord(QUERY, 1.0, EXCEPTION, long),
        CallRecord(QUERY, 1.0, ERROR, "third"),
        CallRecord(QUERY, 1.0, ERROR, "fourth"),
    ]
    kept = tool_load(QUERY, records, 1.0, DEADLINE_MS).first_errors
    assert kept == ["first", "x" * MESSAGE_CHARS, "third"]
    assert len(kept) == FIRST_ERRORS


def test_a_broken_session_gets_a_row_of_its_own_before_the_total() -> None:
    records = [ok(QUERY, 4.0), CallRecord(CONNECT, 2.0, EXCEPTION, "ConnectError: refused")]
    rows = tool_loads(records, 1.0, DEADLINE_MS)
    assert [row.tool for row in rows][-2:] == [CONNECT, ALL_TOOLS]
    assert rows[-2].exceptions == 1 and not rows[-2].meets
    assert rows[-1].calls == 2 and not rows[-1].meets


def test_no_rate_without_a_duration() -> None:
    with pytest.raises(ValueError, match="elapsed_s"):
        tool_load(QUERY, [ok(QUERY, 1.0)], 0.0, DEADLINE_MS)


def test_the_table_shows_counts_percentiles_and_the_verdict() -> None:
    rows = tool_loads([ok(QUERY, 10.0), ok(QUERY, 20.0)], 4.0, DEADLINE_MS)
    query, *_, every = load_rows(rows)
    assert query == [
        *(QUERY, "2", "0.5", "0", "0", "15.0 / 19.5 / 19.9", "20.0", "-", "1000", "meets")
    ]
    summary = load_rows(rows)[3]
    assert summary[0] == "memory.get_session_summary"
    assert summary[5:7] == ["-", "-"] and summary[-1] == "MISSES"
    assert every[:2] == [ALL_TOOLS, "2"]


def test_clients_are_spread_over_the_dm_and_the_npcs_in_turn() -> None:
    assert viewers_of(5, ["ysolde", "berrit"]) == [None, "ysolde", "berrit", None, "ysolde"]
    assert viewers_of(1, ["ysolde"]) == [None]


def test_tools_are_drawn_in_the_mix_s_proportions() -> None:
    rng = random.Random(7)
    drawn = Counter(next_tool(rng) for _ in range(20_000))
    total = sum(TOOL_MIX.values())
    for tool, weight in TOOL_MIX.items():
        assert drawn[tool] / 20_000 == pytest.approx(weight / total, abs=0.015)


@pytest.mark.parametrize(
    ("setting", "flag"),
    [
        ({"clients": 0}, "clients"),
        ({"clients": 257}, "clients"),
        ({"seconds": 0}, "seconds"),
        ({"seconds": 601}, "seconds"),
        ({"host": "0.0.0.0"}, "host"),
        ({"host": "memory.example"}, "host"),
        ({"client_processes": 0}, "client_processes"),
        ({"client_processes": 33}, "client_processes"),
    ],
)
def test_settings_are_bounded_and_loopback_only(setting: dict[str, object], flag: str) -> None:
    with pytest.raises(ValidationError) as raised:
        LoadSettings.model_validate(setting)
    assert [error["loc"] for error in raised.value.errors()] == [(flag,)]


def test_the_bounds_themselves_and_every_loopback_name_are_accepted() -> None:
    for host in ("127.0.0.1", "::1", "localhost"):
        assert LoadSettings(clients=256, seconds=600, host=host).host == host
    assert LoadSettings(clients=1, seconds=1).clients == 1


def test_clients_get_a_process_per_sixteen_unless_told_and_never_more_than_clients() -> None:
    assert LoadSettings(clients=64).processes == 4
    assert LoadSettings(clients=65).processes == 5
    assert LoadSettings(clients=3).processes == 1
    assert LoadSettings(clients=64, client_processes=1).processes == 1
    assert LoadSettings(clients=3, client_processes=8).processes == 3


def _latency(p50: float) -> Summary:
    return Summary(
        samples=200,
        p50_ms=p50,
        p95_ms=p50 * 2,
        p99_ms=p50 * 3,
        mean_ms=p50,
        min_ms=p50,
        max_ms=p50 * 4,
    )


def test_the_yardstick_table_pairs_each_row_before_with_the_same_row_after() -> None:
    def measured(operation: str, p50: float) -> Measurement:
        return Measurement(operation=operation, scope="-", mode="in-process", latency=_latency(p50))

    report = LoadReport.model_construct(
        yardstick_before=[measured("SELECT 1", 0.1), measured("embedding", 0.5)],
        yardstick_after=[measured("embedding", 1.0), measured("SELECT 1", 0.2)],
    )
    assert yardstick_rows(report) == [
        ["SELECT 1", "0.10 / 0.20 / 0.30", "0.20 / 0.40 / 0.60"],
        ["embedding", "0.50 / 1.00 / 1.50", "1.00 / 2.00 / 3.00"],
    ]


def test_the_server_log_is_counted_by_level_logger_and_first_words() -> None:
    log = "\n".join(
        [
            "WARNING glyphoxa_mcp.server.tier_gate: memory.search_sessions passed the STANDARD "
            "deadline and was cancelled",
            "ERROR asyncio: Resetting connection with an active transaction <Connection at 0x1>",
            "Traceback (most recent call last):",
            '  File "x.py", line 1, in <module>',
            "ERROR asyncio: Resetting connection with an active transaction <Connection at 0x2>",
            "WARNING glyphoxa_mcp.server.tier_gate: memory.search_sessions passed the STANDARD "
            "deadline and was cancelled",
            "ERROR:    Exception in ASGI application",
            "WARNING glyphoxa_mcp.server.tier_gate: memory.search_sessions passed the STANDARD "
            "deadline and was cancelled",
        ]
    )
    assert log_counts(log) == {
        "WARNING glyphoxa_mcp.server.tier_gate: memory.search_sessions passed the STANDARD "
        "deadline": 3,
        "ERROR asyncio: Resetting connection with an active": 2,
        "ERROR uvicorn: Exception in ASGI application": 1,
    }
    assert list(log_counts(log).values()) == [3, 2, 1]  # most frequent first
    assert log_counts("") == {}


def test_errors_are_counted_by_kind_and_a_busy_refusal_within_50_ms_is_in_time() -> None:
    busy = "memory.search_facts: memory is busy and cannot answer ... Retry after 120 ms."
    cancelled = (
        "memory.search_facts did not finish within the STANDARD tier's deadline of 1000 ms and "
        "was cancelled."
    )
    records = [
        ok(FACTS, 10.0),
        ok(FACTS, 1200.0),  # answered, but late
        CallRecord(FACTS, 3.0, ERROR, busy),
        CallRecord(FACTS, 80.0, ERROR, busy),  # refused, but not at once
        CallRecord(FACTS, 1001.0, ERROR, cancelled),
        # Before admission control, a cancellation with every connection taken said "busy".
        CallRecord(
            FACTS, 1002.0, ERROR, "memory is busy (...) and the call was cancelled at the deadline"
        ),
        CallRecord(
            FACTS, 5.0, ERROR, "Memory unavailable: the campaign database is not answering."
        ),
        CallRecord(FACTS, 5.0, ERROR, "Error executing tool memory.search_facts"),
        CallRecord(FACTS, 5.0, EXCEPTION, "ReadError"),
    ]
    row = tool_load(FACTS, records, 2.0, DEADLINE_MS)
    assert row.errors_by_kind == {
        "busy": 2,
        "deadline": 2,
        "unavailable": 1,
        "internal": 1,
        "exception": 1,
    }
    assert (row.answered_in_time, row.refused_within_50ms, row.cancelled_at_deadline) == (1, 1, 2)
    assert row.answered_in_time_per_s == 0.5
    assert not row.meets
    fine = tool_load(FACTS, [ok(FACTS, 10.0), CallRecord(FACTS, 3.0, ERROR, busy)], 1.0, 1000)
    assert fine.meets
    # One refusal that took longer than 50 ms to reach its client misses the target.
    late = tool_load(FACTS, [ok(FACTS, 10.0), CallRecord(FACTS, 51.0, ERROR, busy)], 1.0, 1000)
    assert not late.meets


def test_each_tier_is_held_to_its_own_deadline() -> None:
    records = [
        CallRecord(QUERY, 120.0, OK, tier="FAST"),
        CallRecord(QUERY, 200.0, OK, tier="FAST"),
        CallRecord(FACTS, 900.0, OK, tier="STANDARD"),
    ]
    rows = {row.tool: row for row in tier_loads(records, 1.0, {"FAST": 150, "STANDARD": 1000})}
    assert (rows["FAST"].calls, rows["FAST"].answered_in_time, rows["FAST"].meets) == (2, 1, False)
    assert (rows["STANDARD"].answered_in_time, rows["STANDARD"].meets) == (1, True)


def test_cpu_per_answered_call_by_process_is_on_the_every_tool_row_and_in_the_json() -> None:
    report = LoadReport.model_construct(
        elapsed_s=2.0,
        # As the meter reads them (this process first): shown in the table's order.
        cpu_ms={"clients": 200.0, "serve": 800.0, "postgres": 1000.0},
        cpu_calls=100,
        cpu_ms_per_call={"clients": 2.0, "serve": 8.0, "postgres": 10.0},
        cpu_notes=[],
    )
    rows = tool_loads([ok(QUERY, 10.0)], 2.0, DEADLINE_MS)
    column = LOAD_HEADERS.index("cpu ms/call serve / pg / clients")
    table = load_rows(rows, cpu_per_call_cell(report))
    assert table[-1][0] == ALL_TOOLS and table[-1][column] == "8.00 / 10.00 / 2.00"
    assert {row[column] for row in table[:-1]} == {"-"}  # read for the whole run only
    assert cpu_rows(report) == [
        ["serve", "800", "8.00", "0.40"],
        ["postgres", "1000", "10.00", "0.50"],
        ["clients", "200", "2.00", "0.10"],
        ["together", "2000", "20.00", "1.00"],
    ]
    document = report.model_dump(mode="json", include={"cpu_ms_per_call", "cpu_calls"})
    assert document == {
        "cpu_calls": 100,
        "cpu_ms_per_call": {"serve": 8.0, "postgres": 10.0, "clients": 2.0},
    }


def test_a_process_whose_cpu_was_not_read_shows_a_dash() -> None:
    report = LoadReport.model_construct(
        elapsed_s=1.0,
        cpu_ms={"serve": 50.0, "postgres": None, "clients": 10.0},
        cpu_calls=0,
        cpu_ms_per_call={"serve": None, "postgres": None, "clients": None},
    )
    assert cpu_per_call_cell(report) == "- / - / -"
    assert cpu_rows(report)[1] == ["postgres", "-", "-", "-"]
    # Without any answered call there is nothing to divide by.
    assert cpu_rows(report)[-1] == ["together", "60", "-", "0.06"]
