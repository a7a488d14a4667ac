"""A benchmark's results: the JSON document and the tables printed from it. (pure)"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from glyphoxa_mcp.bench.ingestion import IngestionResult
from glyphoxa_mcp.bench.live_recording import LiveRecordingResult
from glyphoxa_mcp.bench.loader import LoadTimings
from glyphoxa_mcp.bench.machine import Machine
from glyphoxa_mcp.bench.operations import (
    HOT_RESOURCE,
    QUERY_ENTITIES,
    SEARCH_FACTS,
    SEARCH_SESSIONS,
    SESSION_SUMMARY,
)
from glyphoxa_mcp.bench.spec import DatasetSpec
from glyphoxa_mcp.bench.timing import Summary

Mode = Literal["server-side", "in-process", "stdio"]
# The server's own time for a request (a timer in its middleware), no transport or client.
SERVER: Mode = "server-side"
# Around the call of the SDK's client on the server in the same process: adds the client
# (it validates every result against the tool's output schema) but no transport.
IN_PROCESS: Mode = "in-process"
# Around the call of the SDK's stdio client to a `serve` subprocess.
STDIO: Mode = "stdio"
NO_SCOPE = "-"

# The targets on a 2-core machine at reference scale: server-side p95, searches
# without the query embedding.
TARGET_P95_MS = {
    QUERY_ENTITIES: 5.0,
    SESSION_SUMMARY: 3.0,
    SEARCH_FACTS: 8.0,
    SEARCH_SESSIONS: 12.0,
    HOT_RESOURCE: 8.0,
}
TARGET_STDIO_OVERHEAD_MS = 1.5
TARGET_UTTERANCES_PER_S = 500.0
# What the original design estimated for every tool call.
DESIGN_ESTIMATE = "50-400"


class Measurement(BaseModel):
    operation: str
    scope: str
    mode: Mode
    latency: Summary
    # Timed calls slower than the tier's deadline, which a server would have cancelled (the
    # benchmark's servers have a deadline long enough to measure them).
    over_deadline: int = 0


class DatasetReport(BaseModel):
    spec: DatasetSpec
    rows: dict[str, int]
    generate_s: float
    # None when the campaign was already loaded by an earlier run and reused.
    load: LoadTimings | None


class DatabaseReport(BaseModel):
    location: str
    server_version: str
    pgvector_version: str


class BenchReport(BaseModel):
    glyphoxa_version: str
    started_at: datetime
    command: str
    machine: Machine
    database: DatabaseReport
    dataset: DatasetReport
    tier: str
    samples: int
    warmup: int
    measurements: list[Measurement]
    ingestion: IngestionResult | None
    live_recording: LiveRecordingResult | None = None

    def find(self, operation: str, scope: str, mode: Mode) -> Summary | None:
        for m in self.measurements:
            if (m.operation, m.scope, m.mode) == (operation, scope, mode):
                return m.latency
        return None

    def stdio_overhead_ms(self, operation: str, scope: str) -> float | None:
        """What the stdio transport adds: median over stdio minus median in process, the same
        client and server doing the same work (searches embed their query in both)."""
        stdio = self.find(operation, scope, STDIO)
        local = self.find(operation, scope, IN_PROCESS)
        if stdio is None or local is None:
            return None
        return round(stdio.p50_ms - local.p50_ms, 3)

    def rows(self) -> list[tuple[str, str]]:
        """(operation, scope) in the order measured."""
        return list(dict.fromkeys((m.operation, m.scope) for m in self.measurements))


LATENCY_HEADERS = (
    "operation",
    "scope",
    "server-side p50/p95/p99",
    "in-process p50/p95/p99",
    "stdio p50/p95/p99",
    "stdio - in-process p50",
    "target p95",
    "design",
    "verdict",
)


def _triple(summary: Summary | None) -> str:
    if summary is None:
        return "-"
    return f"{summary.p50_ms:.2f} / {summary.p95_ms:.2f} / {summary.p99_ms:.2f}"


def verdict(report: BenchReport, operation: str, scope: str) -> str:
    """'meets' or 'MISSES' the targets that apply to the row (server-side p95, stdio
    overhead), or '' when none does. A row judged by its stdio overhead alone (the
    '+ embedding' searches, whose p95 target is the plain row's) says so, or "meets" would
    read as if its latency were fine."""
    checks = []
    target = TARGET_P95_MS.get(operation)
    server = report.find(operation, scope, SERVER)
    if target is not None and server is not None:
        checks.append(server.p95_ms <= target)
    overhead = report.stdio_overhead_ms(operation, scope)
    if overhead is not None:
        checks.append(overhead <= TARGET_STDIO_OVERHEAD_MS)
    if not checks:
        return ""
    judged = "meets" if all(checks) else "MISSES"
    return f"overhead {judged}" if target is None else judged


def latency_rows(report: BenchReport) -> list[list[str]]:
    rows = []
    for operation, scope in report.rows():
        overhead = report.stdio_overhead_ms(operation, scope)
        target = TARGET_P95_MS.get(operation)
        tool = operation.startswith("memory.")
        rows.append(
            [
                operation,
                scope,
                _triple(report.find(operation, scope, SERVER)),
                _triple(report.find(operation, scope, IN_PROCESS)),
                _triple(report.find(operation, scope, STDIO)),
                f"{overhead:+.2f}" if overhead is not None else "-",
                f"{target:g}" if target is not None else "-",
                DESIGN_ESTIMATE if tool else "-",
                verdict(report, operation, scope),
            ]
        )
    return rows


INGESTION_HEADERS = (
    "utterances",
    "sessions",
    "passages",
    "ingest s",
    "process s",
    "of which embedding s",
    "utterances/s",
    "utterances/s without embedding",
    "target",
)


def ingestion_rows(result: IngestionResult) -> list[list[str]]:
    return [
        [
            str(result.utterances),
            str(result.sessions),
            str(result.passages),
            f"{result.ingest_s:.2f}",
            f"{result.process_s:.2f}",
            f"{result.embedding_s:.2f}",
            f"{result.utterances_per_s:g}",
            f"{result.utterances_per_s_without_embedding:g}",
            f">= {TARGET_UTTERANCES_PER_S:g}",
        ]
    ]


LIVE_HEADERS = ("measure", "p50/p95/p99 ms", "target p95", "verdict")


def live_rows(result: LiveRecordingResult) -> list[list[str]]:
    def row(name: str, summary: Summary, target: float | None) -> list[str]:
        verdict = "-" if target is None else ("meets" if summary.p95_ms <= target else "MISSES")
        return [name, _triple(summary), "-" if target is None else f"<= {target:g} ms", verdict]

    return [
        row("append call", result.append, None),
        row("append -> hot notification", result.hot_notification, result.target_notified_ms),
        row("append -> found by search", result.searchable, result.target_searchable_ms),
    ]
