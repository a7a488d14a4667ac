"""Work side by side on pooled connections, with errors that read as if it had not been.

Independent reads at once: each takes its own pooled connection, so PostgreSQL works on
them side by side and a tool call waits for the slowest, not for their sum. Task groups
wrap a failure in an ExceptionGroup; callers above expect the one error that happened.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, TypeVar

import anyio
import anyio.lowlevel

T = TypeVar("T")
# The longest a call works on the event loop before letting it run what else is ready (a
# refusal, another call's next step): every request of the process waits while one works.
SLICE_S = 0.002


async def concurrently(*calls: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Every call's result, in order. If any fail, the error of the first that failed (in
    the order given) is raised, as if they had run one after another."""
    results: list[Any] = [None] * len(calls)
    errors: list[Exception | None] = [None] * len(calls)

    async def run(position: int) -> None:
        try:
            results[position] = await calls[position]()
        except Exception as exc:  # re-raised below, the first in order
            errors[position] = exc

    async with anyio.create_task_group() as tasks:
        for position in range(len(calls)):
            tasks.start_soon(run, position)
    for error in errors:
        if error is not None:
            raise error
    return results


@contextlib.contextmanager
def first_error() -> Iterator[None]:
    """Around a task group: its failure raised as the first error inside, unwrapped from
    the (possibly nested) ExceptionGroup, so callers catch our own errors as usual."""
    try:
        yield
    except ExceptionGroup as group:
        error: BaseException = group
        while isinstance(error, BaseExceptionGroup):
            error = error.exceptions[0]
        raise error from group


async def kept_in_slices(items: Iterable[T], keep: Callable[[T], bool]) -> list[T]:
    """The items `keep` says yes to, in order, checked in slices of about SLICE_S with the
    event loop let run between them: checking a few hundred texts not seen before for hidden
    names takes tens of milliseconds, which would otherwise hold up every other request."""
    found: list[T] = []
    began = time.perf_counter()
    for item in items:
        if keep(item):
            found.append(item)
        if time.perf_counter() - began > SLICE_S:
            await anyio.lowlevel.checkpoint()
            began = time.perf_counter()
    return found
