"""Background work that cannot take the server down or leave it half-alive.

Every long-lived task of a server (the guard's probe, the change feed, the endpoints' session
managers, the recorder's indexers and endings) runs under a `Supervisor`: an exception it did
not expect (a driver's `InternalClientError` after a restart, say) is contained, logged once
with its traceback (not once per retry), and the task started again with backoff. The
supervisor knows each task's state, for `/healthz`; `UnhealthyExit` ends a process that has
not been able to serve for too long, so whatever runs it starts it again.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import Context
from dataclasses import dataclass, field
from enum import StrEnum
from types import TracebackType
from typing import Any, Literal

import anyio
from anyio import TaskHandle
from anyio.abc import TaskGroup, TaskStatus

from glyphoxa_mcp.backoff import Backoff

log = logging.getLogger(__name__)
# A supervised task is started again after 0.5 s, doubling to 10 s; a run that lasted that
# long starts the count over.
RESTART_FIRST_S = 0.5
RESTART_LONGEST_S = 10.0
# What `serve` exits with when it could not serve for too long (EX_SOFTWARE).
UNHEALTHY_EXIT_CODE = 70
DEFAULT_UNHEALTHY_EXIT_S = 30.0
HEARTBEAT_S = 1.0


class TaskState(StrEnum):
    RUNNING = "running"
    RESTARTING = "restarting"  # failed; started again after a pause
    STOPPED = "stopped"  # an essential task that ended: the server cannot do without it


@dataclass
class TaskHealth:
    name: str
    essential: bool
    state: TaskState = TaskState.RUNNING
    failures: int = 0
    last_error: str | None = None

    def report(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state.value,
            "failures": self.failures,
            **({"last_error": self.last_error} if self.last_error else {}),
        }


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:200]


@dataclass
class FailureStreak:
    """Failures of one piece of work in a row: the first is logged (with its traceback unless
    it is `expected`), the rest only counted, and the end of the streak logged once."""

    what: str
    expected: tuple[type[BaseException], ...] = ()
    count: int = 0

    def failed(self, exc: BaseException) -> None:
        self.count += 1
        if self.count > 1:
            log.debug("%s failed again (%d in a row): %s", self.what, self.count, describe(exc))
        elif isinstance(exc, self.expected):
            log.warning("%s failed (%s); retrying", self.what, exc)
        else:
            log.error("%s failed unexpectedly; retrying", self.what, exc_info=exc)

    def succeeded(self) -> None:
        if self.count:
            log.warning("%s works again after %d failures", self.what, self.count)
            self.count = 0


@dataclass
class Supervisor:
    """Runs background tasks, contains what they raise, and knows how each one is doing."""

    clock: Callable[[], float] = time.monotonic
    restart_first_s: float = RESTART_FIRST_S
    restart_longest_s: float = RESTART_LONGEST_S
    contained: int = 0  # unexpected exceptions contained so far
    last_beat: float = field(default_factory=time.monotonic)
    _tasks: dict[int, TaskHealth] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    async def keep_running(
        self, name: str, run: Callable[[], Awaitable[None]], *, essential: bool = True
    ) -> None:
        """`run` until it returns, started again with backoff whenever it raises. An essential
        task that returns is reported stopped; any other is forgotten."""
        key = next(self._ids)
        health = self._tasks[key] = TaskHealth(name, essential)
        streak = FailureStreak(f"background task {name!r}")
        backoff = Backoff(self.restart_first_s, self.restart_longest_s)
        try:
            while True:
                started = self.clock()
                health.state = TaskState.RUNNING
                try:
                    await run()
                except Exception as exc:
                    self.contained += 1
                    if self.clock() - started >= self.restart_longest_s:
                        backoff.reset()
                    streak.failed(exc)
                    health.state, health.last_error = TaskState.RESTARTING, describe(exc)
                    health.failures += 1
                    await anyio.sleep(backoff.next())
                    continue
                if essential:
                    log.error("background task %r ended; the server cannot do without it", name)
                    health.state = TaskState.STOPPED
                    key = -1  # kept, as stopped
                return
        finally:
            self._tasks.pop(key, None)

    async def once(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        """`run` once, what it raises contained and logged (not started again)."""
        try:
            await run()
        except Exception as exc:
            self.contained += 1
            log.error("background task %r failed", name, exc_info=exc)

    def tasks(self) -> list[TaskHealth]:
        return list(self._tasks.values())

    def problems(self) -> list[str]:
        """Why the server cannot serve as it should, if it cannot: essential tasks not running,
        or an event loop that has not beaten for a while."""
        problems = [
            f"{task.name} {task.state.value}"
            for task in self.tasks()
            if task.essential and task.state is not TaskState.RUNNING
        ]
        silent_s = self.clock() - self.last_beat
        if silent_s > 5 * HEARTBEAT_S:
            problems.append(f"event loop silent for {silent_s:.0f} s")
        return problems

    async def beat(self) -> None:
        """Say every second that the event loop runs (see `UnhealthyExit`)."""
        while True:
            self.last_beat = self.clock()
            await anyio.sleep(HEARTBEAT_S)

    def task_group(self, tasks: TaskGroup) -> TaskGroup:
        return ContainedTaskGroup(tasks, self)


class ContainedTaskGroup(TaskGroup):
    """`tasks`, except that what a task started here raises is contained by the supervisor
    (logged once) instead of cancelling every task of the group."""

    def __init__(self, tasks: TaskGroup, supervisor: Supervisor) -> None:
        self._inner = tasks
        self._supervisor = supervisor
        self.cancel_scope = tasks.cancel_scope

    def create_task(
        self, coro: Coroutine[Any, Any, Any], *, name: object = None, context: Context | None = None
    ) -> TaskHandle[Any]:
        async def contained() -> None:
            await self._supervisor.once(str(name), lambda: coro)

        return self._inner.create_task(contained(), name=name, context=context)

    async def start(
        self,
        func: Callable[..., Coroutine[Any, Any, Any]],
        *args: object,
        name: object = None,
        return_handle: Literal[False, True] = False,
    ) -> Any:
        async def contained(*, task_status: TaskStatus[Any] = anyio.TASK_STATUS_IGNORED) -> None:
            await self._supervisor.once(
                str(name or getattr(func, "__qualname__", func)),
                lambda: func(*args, task_status=task_status),
            )

        return await self._inner.start(contained, name=name, return_handle=return_handle)

    async def __aenter__(self) -> TaskGroup:
        raise RuntimeError("a ContainedTaskGroup wraps a task group entered elsewhere")

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool:
        raise RuntimeError("a ContainedTaskGroup wraps a task group entered elsewhere")


class UnhealthyExit:
    """A thread (so it works even when the event loop does not) that ends the process with
    `UNHEALTHY_EXIT_CODE` once `problems` has named a problem for `bound_s` without a break.
    A database outage is not such a problem: restarting would not bring the database back."""

    def __init__(
        self,
        bound_s: float,
        problems: Callable[[], list[str]],
        *,
        exit_process: Callable[[int], object] = os._exit,
        every_s: float = 0.5,
    ) -> None:
        self.bound_s = bound_s
        self.problems = problems
        self.exit_process = exit_process
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="unhealthy-exit", daemon=True)

    def __enter__(self) -> UnhealthyExit:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        since: float | None = None
        while not self._stop.wait(self.every_s):
            try:
                problems = self.problems()
            except Exception:  # read while the loop changes it: look again next time
                continue
            if not problems:
                since = None
                continue
            now = time.monotonic()
            since = now if since is None else since
            if now - since >= self.bound_s:
                log.critical(
                    "cannot serve for %.0f s (%s); exiting with %d so a supervisor restarts "
                    "the server",
                    now - since,
                    "; ".join(problems),
                    UNHEALTHY_EXIT_CODE,
                )
                for handler in logging.getLogger().handlers:
                    handler.flush()
                self.exit_process(UNHEALTHY_EXIT_CODE)
                return
