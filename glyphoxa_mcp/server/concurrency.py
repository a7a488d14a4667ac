"""Independent reads at once: each takes its own pooled connection, so PostgreSQL works on
them side by side and a tool call waits for the slowest, not for their sum."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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
