"""CPU time of processes, from the operating system's counters: what a measured call costs the
machine, beside how long it waits. Linux only (it reads /proc); elsewhere nothing is readable
but the bench's own process.

A process's reading is its user and system time, all its threads together (utime + stime in
/proc/<pid>/stat). A process tree's reading (the PostgreSQL server: the postmaster and its
backends, autovacuum, checkpointer, I/O workers...) adds the time of the children that ended
and were waited for (the root's cutime + cstime) and the reading of every live child, so that
processes coming and going during a window are counted: one that began in it from its start,
one that ended in it up to its end.

Limits, all small beside a measured row:
- /proc counts in clock ticks (1/SC_CLK_TCK s, 10 ms on Linux): each reading of each process
  is up to a tick short. Over a window of seconds that is nothing; a row's figure summed over
  its calls one by one is right on average but noisy below a few ms per call.
- A child that has exited but is not yet reaped is missed by a reading until its parent waits
  for it (the postmaster does at once), and one reaped between the reading of the children and
  that of the root is counted twice in that reading: races of microseconds.
- Live grandchildren are not counted, only their time once their parent has reaped them
  (PostgreSQL's processes start none of their own).
- The bench's own process is read with time.process_time(), which is exact (nanoseconds).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from glyphoxa_mcp.db.database import Database

PROC = Path("/proc")
CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# How far apart the postmaster's start as PostgreSQL reports it and as /proc tells it may be
# for the process found to be that server's (it writes its start time just after it forks).
SAME_START_S = 2.0
POSTGRES_COMMAND = "postgres"

# Cumulative CPU seconds of a process or a tree of them; None once it is no longer readable.
CpuCounter = Callable[[], float | None]


@dataclass(frozen=True, slots=True)
class ProcessStat:
    """The fields of /proc/<pid>/stat a reading needs, in seconds."""

    name: str
    parent: int
    own_s: float
    reaped_children_s: float
    # Since the machine booted.
    started_s: float


def read_stat(pid: int | str = "self") -> ProcessStat | None:
    """The process's CPU counters; None if it is gone (or /proc is not there)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name is in parentheses and may itself hold spaces and parentheses: the
    # numbered fields are those after its last ')', starting with field 3 (the state).
    head, _, rest = text.rpartition(")")
    fields = rest.split()
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return ProcessStat(
        name=head.partition("(")[2],
        parent=int(fields[1]),
        own_s=(utime + stime) / CLOCK_TICKS_PER_S,
        reaped_children_s=(cutime + cstime) / CLOCK_TICKS_PER_S,
        started_s=int(fields[19]) / CLOCK_TICKS_PER_S,
    )


def children_of(pid: int) -> list[int]:
    """The live children of a process: from each of its threads' `children` list, or, on a
    kernel without those, by every process's parent."""
    lists = list((PROC / str(pid) / "task").glob("*/children"))
    if lists:
        found: list[int] = []
        for listed in lists:
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                found += [int(child) for child in listed.read_text().split()]
        return found
    return [
        int(entry.name)
        for entry in PROC.iterdir()
        if entry.name.isdigit()
        and (stat := read_stat(entry.name)) is not None
        and stat.parent == pid
    ]


def process_cpu_s(pid: int) -> float | None:
    """A single process's CPU seconds, all its threads (its children left out)."""
    stat = read_stat(pid)
    return None if stat is None else stat.own_s


def tree_cpu_s(pid: int) -> float | None:
    """CPU seconds of a process, of its children that ended, and of its live children (with
    those of theirs that ended); None once the root is gone."""
    children = 0.0
    for child in children_of(pid):
        stat = read_stat(child)
        if stat is not None:  # ended since it was listed: counted in the root's reaped time
            children += stat.own_s + stat.reaped_children_s
    root = read_stat(pid)  # after the children: one that ends meanwhile is in its reaped time
    if root is None:
        return None
    return root.own_s + root.reaped_children_s + children


def process_tree(pid: int) -> CpuCounter:
    return lambda: tree_cpu_s(pid)


def own_process() -> float:
    """This process's CPU seconds, every thread, to the nanosecond."""
    return time.process_time()


def own_and_reaped_children() -> float:
    """This process's CPU seconds, with those of its children that ended and were waited for
    (in clock ticks)."""
    spent = os.times()
    return spent.user + spent.system + spent.children_user + spent.children_system


class CpuMeter:
    """The CPU seconds of a few named processes, read together: the process taking the
    readings (`own`) is read closest to the window, so that reading the others (a tree of
    processes takes a fraction of a millisecond) is not charged to it."""

    def __init__(
        self,
        own: str,
        others: Mapping[str, CpuCounter | None],
        own_counter: CpuCounter = own_process,
    ) -> None:
        self.own = own
        self.others = dict(others)
        self.own_counter = own_counter

    @property
    def names(self) -> list[str]:
        return [self.own, *self.others]

    def _others(self) -> dict[str, float | None]:
        return {name: None if read is None else read() for name, read in self.others.items()}

    def opening(self) -> dict[str, float | None]:
        """Readings at the start of a window."""
        readings = self._others()
        return {self.own: self.own_counter(), **readings}

    def closing(self) -> dict[str, float | None]:
        """Readings at the end of a window."""
        own = self.own_counter()
        return {self.own: own, **self._others()}


def spent_ms(
    opening: Mapping[str, float | None], closing: Mapping[str, float | None]
) -> dict[str, float | None]:
    """CPU milliseconds of each process between two readings; None where either is missing."""
    spent: dict[str, float | None] = {}
    for name, began in opening.items():
        ended = closing.get(name)
        spent[name] = None if began is None or ended is None else (ended - began) * 1000
    return spent


def add_ms(
    total: Mapping[str, float | None], more: Mapping[str, float | None]
) -> dict[str, float | None]:
    """Two windows' CPU milliseconds together; None where either is unknown."""
    return {
        name: None if spent is None or more.get(name) is None else spent + (more[name] or 0.0)
        for name, spent in total.items()
    }


def per_call_ms(spent: Mapping[str, float | None], calls: int) -> dict[str, float | None]:
    """CPU milliseconds per call of each process; None where unknown or without a call."""
    return {
        name: None if ms is None or calls <= 0 else round(ms / calls, 3)
        for name, ms in spent.items()
    }


def _boot_time_s() -> float | None:
    try:
        for line in (PROC / "stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        return None
    return None


NOT_VISIBLE = (
    "PostgreSQL's processes are not visible on this machine (a server on another host, or in "
    "another PID namespace such as a container): its CPU is not reported."
)


async def postgres_counter(db: Database) -> tuple[CpuCounter | None, str | None]:
    """The PostgreSQL server's process tree (its postmaster, found as the parent of one of our
    connections' backend), or None and why not. The process is taken for the server's only
    if it runs `postgres` and started when the server says it did: a PID from another host
    or PID namespace may belong to anything here."""
    async with db.pool.acquire() as conn:
        backend = await conn.fetchval("SELECT pg_backend_pid()")
        started: datetime = await conn.fetchval("SELECT pg_postmaster_start_time()")
    stat = read_stat(backend)
    boot_s = _boot_time_s()
    if stat is None or stat.name != POSTGRES_COMMAND or boot_s is None:
        return None, NOT_VISIBLE
    postmaster = read_stat(stat.parent)
    if (
        postmaster is None
        or postmaster.name != POSTGRES_COMMAND
        or abs(boot_s + postmaster.started_s - started.timestamp()) > SAME_START_S
    ):
        return None, NOT_VISIBLE
    return process_tree(stat.parent), None
