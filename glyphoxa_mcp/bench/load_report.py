"""A load run's record: the JSON document of `bench load`, and its yardstick table. (pure)"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from glyphoxa_mcp.bench.load import ToolLoad
from glyphoxa_mcp.bench.machine import Machine
from glyphoxa_mcp.bench.report import DatabaseReport, DatasetReport, Measurement
from glyphoxa_mcp.bench.timing import Summary


class LoadReport(BaseModel):
    glyphoxa_version: str
    started_at: datetime
    command: str
    machine: Machine
    database: DatabaseReport
    dataset: DatasetReport
    clients: int
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
    # How late the clients' own event loop ran a timer during the run (ms): the clients'
    # latencies include it.
    client_loop_lag: Summary | None = None

    @property
    def meets(self) -> bool:
        return all(row.meets for row in self.tiers or self.tools)


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
