"""A benchmark's results: the JSON document and the tables printed from it. (pure)"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from glyphoxa_mcp.bench.bulk_loader import LoadTimings
from glyphoxa_mcp.bench.edits_under_load import EditsUnderLoadResult
from glyphoxa_mcp.bench.ingestion import IngestionResult
from glyphoxa_mcp.bench.live_recording import LiveRecordingResult
from glyphoxa_mcp.bench.machine import Machine
from glyphoxa_mcp.bench.operations import (
    HOT_RESOURCE,
    MEANING_FLOOR,
    MEANING_LEG,
    QUERY_ENTITIES,
    SCOPE_REBUILD,
    SEARCH_FACTS,
    SEARCH_SESSIONS,
    SESSION_SUMMARY,
    TANTIVY_PEER,
    WORD_LEG,
    WORD_PEER,
    floor_name,
)
from glyphoxa_mcp.bench.scene_change import SceneChangeResult
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
# The processes whose CPU each timed row reports, in the table's order: the bench's own (it
# runs the servers measured in process and every client) and the PostgreSQL server's every
# process.
BENCH_PROCESS = "bench"
POSTGRES_PROCESS = "postgres"
CPU_PROCESSES = (BENCH_PROCESS, POSTGRES_PROCESS)

# The targets (issue 17), each held to a figure measured in the same run: a tool or the hot
# resource (server-side, searches with precomputed query vectors) to its floor, the bare
# statements fetching the same rows; a ranking alone to its floor or its peer.
TOOL_FLOOR_FACTOR = 2.0
WORD_PEER_FACTOR = 1.5
# An NPC's rows with the witness rule on, to the same rows of an NPC who hears every line
# (the rule's filter passes every row), measured in turn with them (issue 30).
WITHOUT_RULE_FACTOR = 1.3
# A scope change has no floor to be held to: an absolute figure.
SCOPE_CHANGE_TARGET_MS = 20.0
# What the stdio transport may add to a call's median (all that judges the '+ embedding'
# rows, whose latency is the embedder's as much as ours).
TARGET_STDIO_OVERHEAD_MS = 1.5
# What the original design estimated for every tool call.
DESIGN_ESTIMATE = "50-400"
JUDGED_BY_FLOOR = (QUERY_ENTITIES, SESSION_SUMMARY, SEARCH_FACTS, SEARCH_SESSIONS, HOT_RESOURCE)


class Reference(BaseModel):
    """The row a measurement is held to, and its p95."""

    operation: str
    p95_ms: float


class ScopedReference(Reference):
    """The same operation in another scope, and its p95."""

    scope: str


class Measurement(BaseModel):
    operation: str
    scope: str
    mode: Mode
    latency: Summary
    # Timed calls slower than the tier's deadline, which a server would have cancelled (the
    # benchmark's servers have a deadline long enough to measure them).
    over_deadline: int = 0
    # Set on a measurement with a target (see `judged`): the target, whether it is met, the
    # floor or peer it is held to, and the measurement's p95 over that one's.
    target: str | None = None
    meets: bool | None = None
    floor: Reference | None = None
    peer: Reference | None = None
    ratio: float | None = None
    # The witness rule's target, beside the floor's: the same operation in the scope of an
    # NPC who hears every line, its p95 over that one's, and whether within the factor.
    without_rule: ScopedReference | None = None
    rule_ratio: float | None = None
    rule_meets: bool | None = None
    # CPU milliseconds per timed call, by process ("bench": this process, which runs the
    # servers measured in process and the clients; "postgres": the server's every process),
    # from the operating system's counters read around each call (bench/cpu.py); a process
    # that could not be read is None. The server-side row of a call has its in-process
    # row's figure: the same calls.
    cpu_ms_per_call: dict[str, float | None] | None = None
    # The word ranking's yardstick, reported beside its verdict and judging nothing: tantivy
    # over the same passages and queries, and the measurement's p95 over tantivy's.
    tantivy: Reference | None = None
    tantivy_ratio: float | None = None


def held_to(p95_ms: float, reference_p95_ms: float, factor: float) -> tuple[float, bool]:
    """p95 over the reference's p95, and whether that is within `factor`. (A reference of 0
    ms, below the clock's resolution, is met only by 0 ms.)"""
    if reference_p95_ms <= 0:
        return (1.0 if p95_ms <= 0 else float("inf")), p95_ms <= 0
    ratio = p95_ms / reference_p95_ms
    return round(ratio, 3), p95_ms <= factor * reference_p95_ms


def _find(measurements: list[Measurement], operation: str, scope: str) -> Measurement | None:
    for m in measurements:
        if (m.operation, m.scope) == (operation, scope):
            return m
    return None


def _relative(
    measured: Measurement, reference: Measurement | None, factor: float, kind: str
) -> Measurement:
    if reference is None:
        return measured
    ratio, meets = held_to(measured.latency.p95_ms, reference.latency.p95_ms, factor)
    against = Reference(operation=reference.operation, p95_ms=reference.latency.p95_ms)
    return measured.model_copy(
        update={
            "target": f"p95 <= {factor:g} x {kind} p95",
            "meets": meets,
            kind: against,
            "ratio": ratio,
        }
    )


def _beside_tantivy(measured: Measurement, tantivy: Measurement | None) -> Measurement:
    if tantivy is None:
        return measured
    ratio, _within = held_to(measured.latency.p95_ms, tantivy.latency.p95_ms, 1.0)
    against = Reference(operation=tantivy.operation, p95_ms=tantivy.latency.p95_ms)
    return measured.model_copy(update={"tantivy": against, "tantivy_ratio": ratio})


def judge(measured: Measurement, measurements: list[Measurement]) -> Measurement:
    """`measured` with its target and verdict, when one applies to it."""
    name = measured.operation
    if name in JUDGED_BY_FLOOR and measured.mode == SERVER:
        floor = _find(measurements, floor_name(name), measured.scope)
        return _relative(measured, floor, TOOL_FLOOR_FACTOR, "floor")
    if name == WORD_LEG:
        peer = _find(measurements, WORD_PEER, measured.scope)
        return _beside_tantivy(
            _relative(measured, peer, WORD_PEER_FACTOR, "peer"),
            _find(measurements, TANTIVY_PEER, measured.scope),
        )
    if name == MEANING_LEG:
        floor = _find(measurements, MEANING_FLOOR, measured.scope)
        return _relative(measured, floor, TOOL_FLOOR_FACTOR, "floor")
    if name == SCOPE_REBUILD:
        return measured.model_copy(
            update={
                "target": f"p95 <= {SCOPE_CHANGE_TARGET_MS:g} ms",
                "meets": measured.latency.p95_ms <= SCOPE_CHANGE_TARGET_MS,
            }
        )
    return measured


def judge_rule(
    measured: Measurement, measurements: list[Measurement], without_rule: dict[str, str]
) -> Measurement:
    """`measured` held to its row without the witness rule, when its scope has one (a
    server-side tool or hot-resource row)."""
    reference_scope = without_rule.get(measured.scope)
    ruled = measured.operation.startswith("memory.") or measured.operation == HOT_RESOURCE
    if reference_scope is None or not ruled or measured.mode != SERVER:
        return measured
    reference = next(
        (
            m
            for m in measurements
            if (m.operation, m.scope, m.mode) == (measured.operation, reference_scope, SERVER)
        ),
        None,
    )
    if reference is None:
        return measured
    ratio, meets = held_to(measured.latency.p95_ms, reference.latency.p95_ms, WITHOUT_RULE_FACTOR)
    return measured.model_copy(
        update={
            "without_rule": ScopedReference(
                operation=reference.operation,
                p95_ms=reference.latency.p95_ms,
                scope=reference_scope,
            ),
            "rule_ratio": ratio,
            "rule_meets": meets,
        }
    )


def judged(
    measurements: list[Measurement], without_rule: dict[str, str] | None = None
) -> list[Measurement]:
    """Every measurement, those with a target judged against it; `without_rule` maps a scope
    measured under the witness rule to the scope that reads the same rows without it."""
    return [
        judge_rule(judge(m, measurements), measurements, without_rule or {}) for m in measurements
    ]


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


NO_FAILURE_AFTER_EDIT = "no call of any tier fails or passes its deadline after an entity edit"


class JudgedEdits(EditsUnderLoadResult):
    """Entities edited while calls ran, with the issue's target for it."""

    target: str = NO_FAILURE_AFTER_EDIT
    meets: bool

    @classmethod
    def of(cls, result: EditsUnderLoadResult) -> JudgedEdits:
        return cls(**result.model_dump(), meets=result.failed_after_edit == 0)


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
    scene_changes: SceneChangeResult | None = None
    edits_under_load: JudgedEdits | None = None
    # Why a process's CPU is not reported (PostgreSQL on another host), if it is not.
    cpu_notes: list[str] = []

    def measured(self, operation: str, scope: str, mode: Mode) -> Measurement | None:
        for m in self.measurements:
            if (m.operation, m.scope, m.mode) == (operation, scope, mode):
                return m
        return None

    def find(self, operation: str, scope: str, mode: Mode) -> Summary | None:
        m = self.measured(operation, scope, mode)
        return m.latency if m is not None else None

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

    def judged_row(self, operation: str, scope: str) -> Measurement | None:
        """The row's measurement that carries its target, if any has one."""
        for m in self.measurements:
            if (m.operation, m.scope) == (operation, scope) and m.target is not None:
                return m
        return None

    def rule_row(self, operation: str, scope: str) -> Measurement | None:
        """The row's measurement held to its row without the witness rule, if any."""
        for m in self.measurements:
            if (m.operation, m.scope) == (operation, scope) and m.without_rule is not None:
                return m
        return None


LATENCY_HEADERS = (
    "operation",
    "scope",
    "server-side p50/p95/p99",
    "in-process p50/p95/p99",
    "stdio p50/p95/p99",
    "stdio - in-process p50",
    "cpu ms/call bench / pg",
    "target",
    "design",
    "verdict",
)


def _triple(summary: Summary | None) -> str:
    if summary is None:
        return "-"
    return f"{summary.p50_ms:.2f} / {summary.p95_ms:.2f} / {summary.p99_ms:.2f}"


def _judgement(m: Measurement) -> str:
    """'meets' or 'MISSES', with the ratio to the floor or peer the row is held to, and to
    tantivy's when the row is reported beside it."""
    judged = "meets" if m.meets else "MISSES"
    ratios = []
    if m.ratio is not None:
        ratios.append(f"{m.ratio:.1f}x {'floor' if m.floor is not None else 'bm25s'}")
    if m.tantivy_ratio is not None:
        ratios.append(f"{m.tantivy_ratio:.1f}x tantivy")
    return f"{judged} ({'; '.join(ratios)})" if ratios else judged


def verdict(report: BenchReport, operation: str, scope: str) -> str:
    """The row's verdict against its target (a floor, a peer or an absolute figure), and
    against the stdio overhead target when it went over stdio; '' when none applies. A row
    judged by its stdio overhead alone (the '+ embedding' searches) says so, or "meets"
    would read as if its latency were fine."""
    parts = []
    judged = report.judged_row(operation, scope)
    if judged is not None:
        parts.append(_judgement(judged))
    overhead = report.stdio_overhead_ms(operation, scope)
    if overhead is not None:
        over = "meets" if overhead <= TARGET_STDIO_OVERHEAD_MS else "MISSES"
        parts.append(f"overhead {over}")
    ruled = report.rule_row(operation, scope)
    if ruled is not None and ruled.rule_ratio is not None:
        parts.append(
            f"witness rule {'meets' if ruled.rule_meets else 'MISSES'} "
            f"({ruled.rule_ratio:.2f}x without)"
        )
    return "; ".join(parts)


def target_of(report: BenchReport, operation: str, scope: str) -> str:
    """The row's targets, as the table shows them."""
    targets = []
    judged = report.judged_row(operation, scope)
    if judged is not None and judged.target:
        targets.append(judged.target)
    if report.rule_row(operation, scope) is not None:
        targets.append(f"p95 <= {WITHOUT_RULE_FACTOR:g} x without rule")
    return "; ".join(targets) or "-"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def cpu_cell(m: Measurement | None) -> str:
    """'bench / postgres' CPU ms per call; '-' for a process not read."""
    if m is None or m.cpu_ms_per_call is None:
        return "-"
    return " / ".join(_ms(m.cpu_ms_per_call.get(name)) for name in CPU_PROCESSES)


def latency_rows(report: BenchReport) -> list[list[str]]:
    rows = []
    for operation, scope in report.rows():
        overhead = report.stdio_overhead_ms(operation, scope)
        tool = operation.startswith("memory.")
        rows.append(
            [
                operation,
                scope,
                _triple(report.find(operation, scope, SERVER)),
                _triple(report.find(operation, scope, IN_PROCESS)),
                _triple(report.find(operation, scope, STDIO)),
                f"{overhead:+.2f}" if overhead is not None else "-",
                # The calls made in process (or the only ones, for a row timed one way).
                cpu_cell(
                    report.measured(operation, scope, IN_PROCESS)
                    or report.measured(operation, scope, STDIO)
                ),
                target_of(report, operation, scope),
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
    "embedder alone s",
    "embedder passages/s",
    "embedder share",
    "embedding time share",
    "storage floor s",
    "storage floor share",
    "target",
    "verdict",
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
            f"{result.embedder_alone_s:.2f}",
            f"{result.embedder_passages_per_s:g}",
            f"{result.embedder_share:.2f}",
            f"{result.embedding_time_share:.2f}",
            f"{result.storage_alone_s:.2f}",
            f"{result.storage_alone_share:.2f}",
            result.target,
            "meets" if result.meets else "MISSES",
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


SCENE_HEADERS = ("measure", "p50/p95/p99 ms", "target p95", "verdict")


def scene_rows(result: SceneChangeResult) -> list[list[str]]:
    def row(name: str, summary: Summary, judged: bool) -> list[str]:
        target = result.target_applied_ms
        verdict = ("meets" if summary.p95_ms <= target else "MISSES") if judged else "-"
        return [name, _triple(summary), f"<= {target:g} ms" if judged else "-", verdict]

    return [
        row("the DM's change, commit included", result.change, False),
        row("  the scene heard again, nothing to rewrite", result.hear_scene, False),
        row(f"  (the whole session: {result.session_lines} lines)", result.hear_session, False),
        row("commit -> hot notification", result.notified, True),
        row("commit -> hot context reflects it", result.read, True),
    ]


EDITS_HEADERS = (
    "tier",
    "deadline ms",
    "calls",
    "failed",
    "over deadline",
    "p95 ms",
    "first calls after an edit",
    "of which failed or late",
    "their p95 ms",
    "their max ms",
)


def edits_rows(result: EditsUnderLoadResult) -> list[list[str]]:
    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    return [
        [
            tier.tier.value,
            str(tier.deadline_ms),
            str(tier.calls),
            str(tier.failed),
            str(tier.over_deadline),
            ms(tier.p95_ms),
            str(tier.calls_after_edit),
            str(tier.failed_after_edit),
            ms(tier.p95_after_edit_ms),
            ms(tier.max_after_edit_ms),
        ]
        for tier in result.tiers
    ]
