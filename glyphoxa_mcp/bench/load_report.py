"""A load run's record: the JSON document of `bench load`, and its yardstick table. (pure)"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from glyphoxa_mcp.bench.load import ToolLoad
from glyphoxa_mcp.bench.machine import Machine
from glyphoxa_mcp.bench.report import DatabaseReport, DatasetReport, Measurement
from glyphoxa_mcp.bench.timing import Summary

# The processes whose CPU a load run reports.
SERVE = "serve"
POSTGRES = "postgres"
CLIENTS = "clients"
# In the order the table shows them.
PROCESSES = (SERVE, POSTGRES, CLIENTS)


class LoadReport(BaseModel):
    glyphoxa_version: str
    started_at: datetime
    command: str
    machine: Machine
    database: DatabaseReport
    dataset: DatasetReport
    clients: int
    # The processes the clients were dealt over (load_clients).
    client_processes: int = 1
    seconds: int
    # From the start signal until the last client's last call ended.
    elapsed_s: float
    # "dm" or "npc:<id>", one per client.
    viewers: list[str]
    tier: str
    deadline_ms: int
    # Sessions opened again after one broke, during the timed run.
    reconnects: int
    tools: list[ToolLoad]
    # Every tool of a tier together, against that tier's deadline (issue 28).
    tiers: list[ToolLoad] = []
    # The server's log lines by kind (`load.log_counts`), warm-up included: calls cancelled
    # at their deadline, and anything the server had to say about them.
    server_log: dict[str, int]
    # The bench's yardstick rows (no code of ours), timed just before and just after.
    yardstick_before: list[Measurement]
    yardstick_after: list[Measurement]
    # How late the clients' own event loops ran a timer during the run (ms), every process's
    # measures together: the clients' latencies include it.
    client_loop_lag: Summary | None = None
    # CPU milliseconds over the timed run, from the operating system's counters (bench/cpu.py)
    # read as the clock starts and once the last call has ended, by process: SERVE (the
    # `serve` process answering), POSTGRES (the server's every process: backends,
    # autovacuum, checkpointer...), CLIENTS (the clients' processes, and this one, which
    # waits while the clock runs); None for a process that could not be read (cpu_notes
    # says why).
    cpu_ms: dict[str, float | None] = {}
    # The calls the CPU is divided by: those answered without error. Error answers, busy
    # refusals and failed calls are not counted, their CPU charged to the answered ones: a
    # server that refuses more does not look cheaper.
    cpu_calls: int = 0
    # cpu_ms over cpu_calls, by process.
    cpu_ms_per_call: dict[str, float | None] = {}
    cpu_notes: list[str] = []

    @property
    def meets(self) -> bool:
        return all(row.meets for row in self.tiers or self.tools)


CPU_HEADERS = ("process", "cpu ms in the run", "cpu ms per answered call", "cores busy")


def cpu_rows(report: LoadReport) -> list[list[str]]:
    """Each process's CPU over the run, per answered call, and in cores kept busy."""

    def ms(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    known = [ms for ms in report.cpu_ms.values() if ms is not None]
    total = sum(known) if known else None
    rows = [
        [
            name,
            ms(spent, 0),
            ms(report.cpu_ms_per_call.get(name), 2),
            ms(None if spent is None else spent / 1000 / report.elapsed_s, 2),
        ]
        for name, spent in sorted(report.cpu_ms.items(), key=lambda item: _rank(item[0]))
    ]
    if total is not None and report.cpu_ms:
        per_call = total / report.cpu_calls if report.cpu_calls else None
        rows.append(
            ["together", ms(total, 0), ms(per_call, 2), ms(total / 1000 / report.elapsed_s, 2)]
        )
    return rows


def _rank(process: str) -> int:
    return PROCESSES.index(process) if process in PROCESSES else len(PROCESSES)


def cpu_per_call_cell(report: LoadReport) -> str:
    """'serve / postgres / clients' CPU ms per answered call, for the load table."""
    if not report.cpu_ms_per_call:
        return "-"
    per_call = [report.cpu_ms_per_call.get(name) for name in PROCESSES]
    return " / ".join("-" if ms is None else f"{ms:.2f}" for ms in per_call)


YARDSTICK_HEADERS = ("yardstick", "before p50/p95/p99 ms", "after p50/p95/p99 ms")


def _triple(summary: Summary | None) -> str:
    if summary is None:
        return "-"
    return f"{summary.p50_ms:.2f} / {summary.p95_ms:.2f} / {summary.p99_ms:.2f}"


def yardstick_rows(report: LoadReport) -> list[list[str]]:
    after = {m.operation: m.latency for m in report.yardstick_after}
    return [
        [m.operation, _triple(m.latency), _triple(after.get(m.operation))]
        for m in report.yardstick_before
    ]
