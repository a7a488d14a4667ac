"""Work side by side on pooled connections, with errors that read as if it had not been.

Independent reads at once: each takes its own pooled connection, so PostgreSQL works on
them side by side and a tool call waits for the slowest, not for their sum. Task groups
wrap a failure in an ExceptionGroup; callers above expect the one error that happened.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio


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
