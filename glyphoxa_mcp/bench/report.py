"""A benchmark's results: the JSON document and the tables printed from it. (pure)"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from glyphoxa_mcp.bench.ingestion import IngestionResult
from glyphoxa_mcp.bench.loader import LoadTimings
from glyphoxa_mcp.bench.machine import Machine
from glyphoxa_mcp.bench.operations import (
    EMBEDDING_TOOLS,
    HOT_RESOURCE,
    QUERY_ENTITIES,
    SEARCH_FACTS,
    SEARCH_SESSIONS,
    SESSION_SUMMARY,
)
from glyphoxa_mcp.bench.spec import DatasetSpec
from glyphoxa_mcp.bench.timing import Summary

Mode = Literal["in-process", "in-process + embedding", "stdio"]
IN_PROCESS: Mode = "in-process"
WITH_EMBEDDING: Mode = "in-process + embedding"
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
DESIGN_TOOLS = (QUERY_ENTITIES, SESSION_SUMMARY, SEARCH_FACTS, SEARCH_SESSIONS)


class Measurement(BaseModel):
    operation: str
    scope: str
    mode: Mode
    latency: Summary


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

    def find(self, operation: str, scope: str, mode: Mode) -> Summary | None:
        for m in self.measurements:
            if (m.operation, m.scope, m.mode) == (operation, scope, mode):
                return m.latency
        return None

    def stdio_overhead_ms(self, operation: str, scope: str) -> float | None:
        """Median stdio latency over the median in-process latency of the same work (the
        searches embed their query in both)."""
        stdio = self.find(operation, scope, STDIO)
        base = self.find(
            operation, scope, WITH_EMBEDDING if operation in EMBEDDING_TOOLS else IN_PROCESS
        )
        if stdio is None or base is None:
            return None
        return round(stdio.p50_ms - base.p50_ms, 3)


LATENCY_HEADERS = (
    "operation",
    "scope",
    "in-process p50/p95/p99",
    "stdio p50/p95/p99",
    "stdio overhead p50",
    "target p95",
    "design",
    "verdict",
)


def _triple(summary: Summary | None) -> str:
    if summary is None:
        return "-"
    return f"{summary.p50_ms:.2f} / {summary.p95_ms:.2f} / {summary.p99_ms:.2f}"


def _number(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.2f}" if sign else f"{value:g}"


def _verdict(report: BenchReport, operation: str, scope: str, mode: Mode) -> str:
    checks = []
    target = TARGET_P95_MS.get(operation)
    measured = report.find(operation, scope, mode)
    if target is not None and mode == IN_PROCESS and measured is not None:
        checks.append(measured.p95_ms <= target)
    overhead = report.stdio_overhead_ms(operation, scope)
    with_stdio = mode == WITH_EMBEDDING or operation not in EMBEDDING_TOOLS
    if overhead is not None and with_stdio:
        checks.append(overhead <= TARGET_STDIO_OVERHEAD_MS)
    if not checks:
        return ""
    return "meets" if all(checks) else "MISSES"


def latency_rows(report: BenchReport) -> list[list[str]]:
    """One row per operation and scope; a search has a second row with its embedding, beside
    which stdio (where the server embeds the query) is compared."""
    rows = []
    seen: list[tuple[str, str]] = []
    for m in report.measurements:
        if (m.operation, m.scope) not in seen:
            seen.append((m.operation, m.scope))
    for operation, scope in seen:
        modes: list[Mode] = [IN_PROCESS]
        if operation in EMBEDDING_TOOLS:
            modes.append(WITH_EMBEDDING)
        for mode in modes:
            shows_stdio = mode == WITH_EMBEDDING or operation not in EMBEDDING_TOOLS
            label = operation if mode == IN_PROCESS else f"{operation} + embedding"
            target = TARGET_P95_MS.get(operation) if mode == IN_PROCESS else None
            rows.append(
                [
                    label,
                    scope,
                    _triple(report.find(operation, scope, mode)),
                    _triple(report.find(operation, scope, STDIO)) if shows_stdio else "-",
                    _number(report.stdio_overhead_ms(operation, scope), sign=True)
                    if shows_stdio
                    else "-",
                    _number(target),
                    DESIGN_ESTIMATE if operation in DESIGN_TOOLS else "-",
                    _verdict(report, operation, scope, mode),
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
