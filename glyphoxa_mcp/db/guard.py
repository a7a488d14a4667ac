"""Whether the database answers, known without waiting on it: the design's MemoryGuard.

A guard watches one database through a connection of its own (`SELECT 1`, bounded), so a
stalled or unreachable server is told apart from a slow query: a caller that passes its
deadline asks whether a probe started during its call came back. While the database is
down, calls are answered at once with `MemoryUnavailableError` instead of waiting, the
guard retries with backoff (1 s doubling to 30 s; sooner when a call or a health check
asks), and each change of state is logged once. When the database is back, listeners
registered with `on_recovered` run (the pool drops its old connections, the change feed
reconnects).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
import asyncpg
from anyio.abc import TaskGroup

from glyphoxa_mcp.backoff import Backoff
from glyphoxa_mcp.errors import (
    CheckOutstanding,
    DatabaseUnavailableError,
    DeadlineExceeded,
    MemoryBusy,
    MemoryUnavailableError,
)
from glyphoxa_mcp.supervision import FailureStreak, Supervisor

log = logging.getLogger(__name__)
T = TypeVar("T")

PROBE_TIMEOUT_S = 1.0
# While up, a probe this often, so an outage is seen (and logged) with no traffic.
HEARTBEAT_S = 2.0
# A health check reuses a probe that started this recently.
FRESH_PROBE_S = 0.1
# While down, a call first looks whether the database is back, for at most this long.
RECHECK_LIMIT_S = 0.5


@dataclass
class Probe:
    started: float
    done: anyio.Event = field(default_factory=anyio.Event)
    ok: bool | None = None

    @property
    def pending(self) -> bool:
        return self.ok is None


class MemoryGuard:
    def __init__(self, dsn: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.dsn = dsn
        self.clock = clock
        self.available = True
        self.changed_at = clock()
        self._probe: Probe | None = None
        self._conn: asyncpg.Connection | None = None
        self._tasks: TaskGroup | None = None
        self._wake = anyio.Event()
        self._down = anyio.Event()
        self._recovered: list[Callable[[], Awaitable[None]]] = []
        # A probe that raised what no probe should (the driver confused by a restart, say).
        self._odd_probes = FailureStreak("the database probe")
        # Whether every pooled connection is taken (set by the Database the guard watches).
        self.saturated: Callable[[], bool] = lambda: False

    def on_recovered(self, listener: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        """Run `listener` each time the database is back; returns what stops that."""
        self._recovered.append(listener)
        return lambda: self._recovered.remove(listener)

    @contextlib.asynccontextmanager
    async def running(self, supervisor: Supervisor | None = None) -> AsyncIterator[MemoryGuard]:
        """Watch the database while the block runs (the watch under `supervisor`, which
        reports it, if given)."""
        supervisor = supervisor or Supervisor()
        async with anyio.create_task_group() as tasks:
            self._tasks = supervisor.task_group(tasks)
            tasks.start_soon(supervisor.keep_running, "database probe", self._watch)
            try:
                yield self
            finally:
                self._tasks = None
                tasks.cancel_scope.cancel()
                await self._close_connection()

    async def confirm(self, within_s: float) -> bool:
        """Whether the database answers now, waiting at most `within_s` (False past it).
        Joins a probe already under way rather than starting a second one."""
        probe = self._fresh_probe(max_age_s=0.0 if not self.available else FRESH_PROBE_S)
        if probe is None:  # not watching: look once, here
            probe = Probe(self.clock())
            with anyio.move_on_after(within_s):
                await self._run_probe(probe)
            await self._close_connection()
            return probe.ok is True
        with anyio.move_on_after(within_s):
            await probe.done.wait()
        return probe.ok is True

    async def _back(self, within_s: float) -> bool:
        """While down: whether the database answers again. A probe already waiting on a
        stalled server means no: answer at once rather than wait beside it."""
        if self._probe is not None and self._probe.pending:
            return False
        return await self.confirm(within_s)

    def report(self) -> None:
        """A caller lost its connection or could not get one: look again now."""
        self._wake.set()

    async def within(
        self,
        deadline_s: float,
        call: Callable[[], Awaitable[T]],
        *,
        lost: Callable[[T], bool] = lambda _result: False,
    ) -> T:
        """`call` within `deadline_s`. Raises `MemoryUnavailableError` when the database is
        not answering (at once while it is known to be down), and `DeadlineExceeded` when the
        database answered but `call` did not finish in time. A call that lost its connection
        (it raised `DatabaseUnavailableError`, or `lost` says so of its result) is tried once
        more when the database answers again: after a restart, a pooled connection may be
        stale while the database is fine."""
        if not self.available and not await self._back(min(deadline_s / 2, RECHECK_LIMIT_S)):
            raise MemoryUnavailableError()
        # A probe of this call's own (or one still waiting, started just before), once the
        # call has taken half its time: one that answered before the call began says nothing
        # about a database that froze since, and one for every call would double the
        # statements a busy server sends.
        began = self.clock()
        late = self._probe_if_slow(deadline_s / 2)
        try:
            return await self._within(deadline_s, call, lost, began)
        finally:
            late.cancel()

    def _probe_if_slow(self, after_s: float) -> anyio.CancelScope:
        """Start a probe `after_s` from now unless cancelled first (by a call that ended)."""
        scope = anyio.CancelScope()
        if self._tasks is not None:

            async def probe_later() -> None:
                with scope:
                    await anyio.sleep(after_s)
                    self._fresh_probe(max_age_s=0.0)

            self._tasks.start_soon(probe_later)
        return scope

    async def _within(
        self,
        deadline_s: float,
        call: Callable[[], Awaitable[T]],
        lost: Callable[[T], bool],
        began: float,
    ) -> T:
        with anyio.move_on_after(deadline_s):
            for attempt in range(2):
                try:
                    result = await call()
                except MemoryUnavailableError:
                    raise
                except DatabaseUnavailableError as exc:
                    cause: BaseException | None = exc
                else:
                    if not lost(result):
                        return result
                    cause = None
                self.report()
                if attempt == 1 or not await self.confirm(RECHECK_LIMIT_S):
                    raise MemoryUnavailableError() from cause
        probe = self._probe
        # Unavailable only once seen to fail: a probe still waiting may be slow on a busy
        # machine, not stalled (its timeout says which, and the calls after it are told).
        seen_failing = probe is not None and probe.started >= began and probe.ok is False
        if not self.available or seen_failing:
            raise MemoryUnavailableError()
        if self.saturated():
            raise MemoryBusy()
        if probe is not None and probe.pending:
            raise CheckOutstanding()
        raise DeadlineExceeded()

    async def unless_down(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call`, with no deadline of its own, cancelled with `MemoryUnavailableError` as
        soon as the guard sees the database stop answering (within a heartbeat and a probe's
        timeout, about 3 s) - for work that may take long but must not hang on a stalled
        database."""
        if not self.available and not await self._back(RECHECK_LIMIT_S):
            raise MemoryUnavailableError()
        results: list[T] = []
        errors: list[Exception] = []
        async with anyio.create_task_group() as tasks:

            async def run() -> None:
                try:
                    results.append(await call())
                except Exception as exc:  # re-raised below, outside the task group
                    errors.append(exc)
                finally:
                    tasks.cancel_scope.cancel()

            tasks.start_soon(run)
            await self._down.wait()
            tasks.cancel_scope.cancel()
        if errors:
            raise errors[0]
        if not results:
            raise MemoryUnavailableError()
        return results[0]

    def _fresh_probe(self, max_age_s: float) -> Probe | None:
        """A probe started at most `max_age_s` ago (or still running), started if need be;
        None when the guard is not watching."""
        if self._tasks is None:
            return None
        probe = self._probe
        if probe is not None and (probe.pending or self.clock() - probe.started <= max_age_s):
            return probe
        probe = self._probe = Probe(self.clock())
        self._tasks.start_soon(self._run_probe, probe)
        return probe

    async def _run_probe(self, probe: Probe) -> None:
        ok = False
        with anyio.move_on_after(PROBE_TIMEOUT_S):
            try:
                if self._conn is None or self._conn.is_closed():
                    self._conn = await asyncpg.connect(self.dsn, timeout=PROBE_TIMEOUT_S)
                ok = await self._conn.fetchval("SELECT 1") == 1
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                ok = False
            except Exception as exc:  # e.g. InternalClientError: a failed probe all the same
                self._odd_probes.failed(exc)
                ok = False
            else:
                self._odd_probes.succeeded()
        probe.ok = ok
        probe.done.set()
        if not ok:
            await self._close_connection()
        await self._settle(ok)

    async def _settle(self, ok: bool) -> None:
        if ok == self.available:
            return
        now = self.clock()
        took = now - self.changed_at
        self.available, self.changed_at = ok, now
        if not ok:
            log.warning("memory database unavailable; answering 'memory unavailable' and retrying")
            self._wake.set()
            self._down.set()
            return
        self._down = anyio.Event()
        log.warning("memory database available again after %.1f s", took)
        for listener in list(self._recovered):
            try:
                await listener()
            except Exception:  # one listener's failure must not keep the others from running
                log.exception("a recovery listener failed")

    async def _watch(self) -> None:
        backoff = Backoff()
        while True:
            delay = HEARTBEAT_S if self.available else backoff.next()
            if self.available:
                backoff.reset()
            with anyio.move_on_after(delay):
                await self._wake.wait()
            self._wake = anyio.Event()
            probe = self._fresh_probe(max_age_s=0.0)
            if probe is not None:
                await probe.done.wait()

    async def _close_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.terminate()
