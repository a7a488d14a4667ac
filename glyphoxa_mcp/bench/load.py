"""`bench load`: what many clients at once make of one campaign, as figures. (pure)

The run itself (a server on loopback, the clients, the yardsticks) is `load_run`, and its
whole record `load_report`; this module holds the settings, the mix of calls each client
makes, and the aggregation of every call's record into per-tool rows with a verdict against
the tier's deadline. It imports no MCP SDK, so that the command line can read its bounds.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from glyphoxa_mcp.access import is_loopback
from glyphoxa_mcp.bench.spec import DatasetSpec
from glyphoxa_mcp.bench.timing import Summary, summarise
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.tool_names import ToolName

MAX_CLIENTS = 256
MAX_SECONDS = 600
DEFAULT_CLIENTS = 64
DEFAULT_SECONDS = 60
# The clients run in processes of their own (`load_clients`): this many to a process unless
# told otherwise. A client's event loop is part of every latency it records, and one Python
# process of 64 MCP clients runs its timers tens of milliseconds late.
CLIENTS_PER_PROCESS = 16
MAX_CLIENT_PROCESSES = 32
LOOPBACK = "127.0.0.1"
# The viewers the clients are spread over: the DM and this many NPCs, as at one table
# (each viewer's first call builds its scope; a table has a handful of NPCs in play).
NPC_VIEWERS = 7
# How often a voice model asks each tool, per ten calls: who or what something is most
# often, then what is known about it, then what happened, and a recap now and then.
TOOL_MIX = {
    ToolName.QUERY_ENTITIES.value: 4,
    ToolName.SEARCH_FACTS.value: 3,
    ToolName.SEARCH_SESSIONS.value: 2,
    ToolName.GET_SESSION_SUMMARY.value: 1,
}
# A client whose session broke opens a new one; the attempt is recorded under this name.
CONNECT = "(connect)"
ALL_TOOLS = "all tools"
# Distinct error messages kept per tool, and their length.
FIRST_ERRORS = 3
MESSAGE_CHARS = 200
# A log line of `serve`: ours are "LEVEL logger: message", uvicorn's "LEVEL:    message".
LOG_LINE = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL)(?: ([\w.]+):|:) +(.*)$")
LOG_KEY_WORDS = 5

Outcome = Literal["ok", "error", "exception"]
# ok: a result; error: a result with isError (the server refused or cancelled the call);
# exception: no result (the transport, the session or the client failed).
OK: Outcome = "ok"
ERROR: Outcome = "error"
EXCEPTION: Outcome = "exception"
# A busy refusal answered within this long counts as answered in time (issue 28's target).
REFUSAL_WITHIN_MS = 50.0
# Each error's kind, told by its sentence (errors.py writes each once), and a call that got
# no answer at all.
ERROR_KINDS = ("busy", "deadline", "unavailable", "bad_argument", "internal", "other")
EXCEPTION_KIND = "exception"


def error_kind(message: str | None) -> str:
    """Which typed outcome an error answer is, from its text (all a client sees)."""
    text = (message or "").lower()
    if "deadline" in text and "cancelled" in text:  # run, then cancelled (busy or not)
        return "deadline"
    if "memory is busy" in text:  # refused, nothing run
        return "busy"
    if "memory unavailable" in text:
        return "unavailable"
    if "invalid arguments" in text or "do not retry unchanged" in text:
        return "bad_argument"
    if "failed inside glyphoxa-mcp" in text or text.startswith("error executing tool"):
        return "internal"
    return "other"


class LoadSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    spec: DatasetSpec = DatasetSpec()
    # The clients' tiers, in turn (client n calls the tier at n modulo their number); a FAST
    # client calls the one tool FAST offers.
    tiers: tuple[Tier, ...] = Field(default=(Tier.STANDARD,), min_length=1)
    clients: int = Field(default=DEFAULT_CLIENTS, ge=1, le=MAX_CLIENTS)
    # The processes the clients are dealt over; None: one per CLIENTS_PER_PROCESS clients.
    client_processes: int | None = Field(default=None, ge=1, le=MAX_CLIENT_PROCESSES)
    seconds: int = Field(default=DEFAULT_SECONDS, ge=1, le=MAX_SECONDS)
    host: str = LOOPBACK
    dsn: str | None = None
    data_dir: Path | None = None
    replace: bool = False

    @property
    def processes(self) -> int:
        """The client processes of the run: never more than its clients."""
        wanted = self.client_processes or -(-self.clients // CLIENTS_PER_PROCESS)
        return min(wanted, self.clients)

    @field_validator("host")
    @classmethod
    def _loopback(cls, host: str) -> str:
        if not is_loopback(host):
            raise ValueError(
                f"{host!r} is not a loopback address; the load bench serves on this machine "
                "only (127.0.0.1, ::1, localhost)"
            )
        return host


def viewers_of(clients: int, npcs: Sequence[str]) -> list[str | None]:
    """The viewer of each client, the DM (None) and the NPCs in turn."""
    viewers: list[str | None] = [None, *npcs]
    return [viewers[client % len(viewers)] for client in range(clients)]


def next_tool(rng: random.Random) -> str:
    """A tool drawn by TOOL_MIX's weights."""
    return rng.choices(list(TOOL_MIX), weights=list(TOOL_MIX.values()))[0]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call as a client saw it: its tool, how long until the answer (or the failure),
    and what went wrong, if anything."""

    tool: str
    duration_ms: float
    outcome: Outcome
    message: str | None = None
    tier: str = "STANDARD"

    @property
    def kind(self) -> str | None:
        """The error's kind; None for an answer without error."""
        if self.outcome == OK:
            return None
        return EXCEPTION_KIND if self.outcome == EXCEPTION else error_kind(self.message)

    def in_time(self, deadline_ms: int) -> bool:
        """Answered within the deadline, or refused as busy within REFUSAL_WITHIN_MS."""
        if self.outcome == OK:
            return self.duration_ms <= deadline_ms
        return self.kind == "busy" and self.duration_ms <= REFUSAL_WITHIN_MS


class ToolLoad(BaseModel):
    """One tool's calls over the run (or every tool's, under ALL_TOOLS)."""

    tool: str
    calls: int
    calls_per_s: float
    errors: int
    exceptions: int
    # The first distinct messages of errors and exceptions, in the order they came.
    first_errors: list[str]
    # Client-observed, over the calls that got an answer (isError ones too: a call the
    # server cancels at its deadline answers after about the deadline); None if none did.
    latency: Summary | None
    deadline_ms: int
    meets: bool
    # Issue 28's figures: calls answered without error within the deadline (and per second),
    # errors by kind (ERROR_KINDS, and EXCEPTION_KIND), busy refusals answered within
    # REFUSAL_WITHIN_MS, calls cancelled at a deadline, and the latency of answers without
    # error alone.
    answered_in_time: int = 0
    answered_in_time_per_s: float = 0.0
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    refused_within_50ms: int = 0
    cancelled_at_deadline: int = 0
    ok_latency: Summary | None = None
    # The latency of busy refusals alone: how soon "busy" was said; and how many of them
    # came after the call had waited for a place (the rest were refused on arrival).
    busy_latency: Summary | None = None
    refused_after_waiting: int = 0


def _first_messages(records: Sequence[CallRecord]) -> list[str]:
    seen: dict[str, None] = {}
    for record in records:
        if record.outcome != OK and record.message is not None:
            seen.setdefault(record.message[:MESSAGE_CHARS], None)
            if len(seen) == FIRST_ERRORS:
                break
    return list(seen)


def tool_load(
    tool: str, records: Sequence[CallRecord], elapsed_s: float, deadline_ms: int
) -> ToolLoad:
    if elapsed_s <= 0:
        raise ValueError(f"elapsed_s must be above 0; got {elapsed_s}")
    answered = [r.duration_ms for r in records if r.outcome != EXCEPTION]
    latency = summarise(answered) if answered else None
    errors = sum(r.outcome == ERROR for r in records)
    exceptions = sum(r.outcome == EXCEPTION for r in records)
    succeeded = [r.duration_ms for r in records if r.outcome == OK]
    ok_latency = summarise(succeeded) if succeeded else None
    refusals = [r.duration_ms for r in records if r.kind == "busy"]
    kinds = Counter(r.kind for r in records if r.kind is not None)
    in_time = sum(r.outcome == OK and r.in_time(deadline_ms) for r in records)
    in_target = [r.in_time(deadline_ms) for r in records]
    return ToolLoad(
        tool=tool,
        calls=len(records),
        calls_per_s=round(len(records) / elapsed_s, 2),
        errors=errors,
        exceptions=exceptions,
        first_errors=_first_messages(records),
        latency=latency,
        deadline_ms=deadline_ms,
        # Every call answered within its deadline or refused as busy within
        # REFUSAL_WITHIN_MS, as the clients saw it; none cancelled, no other error.
        meets=(bool(records) and ok_latency is not None and all(in_target)),
        answered_in_time=in_time,
        answered_in_time_per_s=round(in_time / elapsed_s, 2),
        errors_by_kind={
            kind: kinds[kind] for kind in (*ERROR_KINDS, EXCEPTION_KIND) if kinds[kind]
        },
        refused_within_50ms=sum(
            r.kind == "busy" and r.duration_ms <= REFUSAL_WITHIN_MS for r in records
        ),
        cancelled_at_deadline=kinds["deadline"],
        ok_latency=ok_latency,
        busy_latency=summarise(refusals) if refusals else None,
        refused_after_waiting=sum(
            r.kind == "busy" and "waited" in (r.message or "") for r in records
        ),
    )


def tool_loads(records: Sequence[CallRecord], elapsed_s: float, deadline_ms: int) -> list[ToolLoad]:
    """A row per tool in TOOL_MIX (then any other name recorded, such as CONNECT), and one
    for all of them together."""
    names = list(TOOL_MIX) + sorted({r.tool for r in records} - set(TOOL_MIX))
    rows = [
        tool_load(name, [r for r in records if r.tool == name], elapsed_s, deadline_ms)
        for name in names
    ]
    return [*rows, tool_load(ALL_TOOLS, records, elapsed_s, deadline_ms)]


def tier_loads(
    records: Sequence[CallRecord], elapsed_s: float, deadlines_ms: dict[str, int]
) -> list[ToolLoad]:
    """A row per tier called, every tool of it together, against that tier's deadline."""
    return [
        tool_load(tier, [r for r in records if r.tier == tier], elapsed_s, deadline_ms)
        for tier, deadline_ms in deadlines_ms.items()
        if any(r.tier == tier for r in records)
    ]


OUTCOME_HEADERS = (
    "calls",
    "in time/s",
    "errors by kind",
    "busy <= 50 ms (waited)",
    "busy p50/p95/p99 ms",
    "cancelled",
    "ok p50/p95/p99 ms",
    "deadline ms",
    "verdict",
)


def outcome_rows(rows: Sequence[ToolLoad]) -> list[list[str]]:
    """Issue 28's figures of each row (a tool or a tier)."""
    return [
        [
            row.tool,
            str(row.calls),
            f"{row.answered_in_time_per_s:.1f}",
            ", ".join(f"{kind} {count}" for kind, count in row.errors_by_kind.items()) or "-",
            f"{row.refused_within_50ms} ({row.refused_after_waiting} waited)",
            _triple(row.busy_latency),
            str(row.cancelled_at_deadline),
            _triple(row.ok_latency),
            str(row.deadline_ms),
            "meets" if row.meets else "MISSES",
        ]
        for row in rows
    ]


LOAD_HEADERS = (
    "tool",
    "calls",
    "calls/s",
    "errors",
    "exceptions",
    "p50/p95/p99 ms",
    "max ms",
    "cpu ms/call serve / pg / clients",
    "deadline ms",
    "verdict",
)


def _triple(summary: Summary | None) -> str:
    if summary is None:
        return "-"
    return f"{summary.p50_ms:.1f} / {summary.p95_ms:.1f} / {summary.p99_ms:.1f}"


def load_rows(rows: Sequence[ToolLoad], cpu_per_call: str = "-") -> list[list[str]]:
    """The rows of the load table; the CPU per call, read for the whole run only, on the row
    of every tool together."""
    return [
        [
            row.tool,
            str(row.calls),
            f"{row.calls_per_s:.1f}",
            str(row.errors),
            str(row.exceptions),
            _triple(row.latency),
            f"{row.latency.max_ms:.1f}" if row.latency else "-",
            cpu_per_call if row.tool == ALL_TOOLS else "-",
            str(row.deadline_ms),
            "meets" if row.meets else "MISSES",
        ]
        for row in rows
    ]


def log_counts(text: str) -> dict[str, int]:
    """How often each kind of line came up in a server's log, most frequent first: level,
    logger and the first words of the message (enough to tell a tool or a cause apart, not
    enough to split by object or id). Lines that start no record (tracebacks) are left out."""
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        match = LOG_LINE.match(line)
        if match is None:
            continue
        level, logger, message = match.groups()
        head = " ".join(message.split()[:LOG_KEY_WORDS])
        counts[f"{level} {logger or 'uvicorn'}: {head}"] += 1
    return dict(counts.most_common())
