from __future__ import annotations

import time

import anyio
import anyio.lowlevel
import pytest

from glyphoxa_mcp.concurrency import SLICE_S, concurrently, first_error, kept_in_slices
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError


async def test_results_come_back_in_the_order_asked_and_the_calls_overlap() -> None:
    started: list[str] = []
    both = anyio.Event()

    async def slow() -> str:
        started.append("slow")
        with anyio.fail_after(5):
            await both.wait()  # only set once the other call has started too
        return "slow"

    async def quick() -> str:
        started.append("quick")
        both.set()
        return "quick"

    assert await concurrently(slow, quick) == ["slow", "quick"]
    assert started == ["slow", "quick"]


async def test_the_first_failure_in_order_is_raised_as_itself() -> None:
    async def missing() -> None:
        raise NotFoundError("no such thing")

    async def invalid() -> None:
        raise InvalidInputError("bad")

    async def fine() -> int:
        return 1

    with pytest.raises(NotFoundError, match="no such thing"):
        await concurrently(fine, missing, invalid)
    with pytest.raises(InvalidInputError):
        await concurrently(invalid, fine)


async def test_a_task_group_failure_is_raised_as_the_error_inside() -> None:
    async def fails() -> None:
        raise NotFoundError("no such session")

    with pytest.raises(NotFoundError, match="no such session") as raised, first_error():
        async with anyio.create_task_group() as outer:
            outer.start_soon(anyio.sleep_forever)
            async with anyio.create_task_group() as inner:
                inner.start_soon(fails)
    assert isinstance(raised.value.__cause__, ExceptionGroup)


async def test_a_long_check_lets_the_event_loop_run_between_its_slices() -> None:
    """What a check keeps is in order; while it works, other requests get their turns."""
    turns = 0
    done = anyio.Event()

    async def another_request() -> None:
        nonlocal turns
        while not done.is_set():
            turns += 1
            await anyio.lowlevel.checkpoint()

    def slow_even(n: int) -> bool:
        time.sleep(SLICE_S)  # a text not seen before, checked for hidden names
        return n % 2 == 0

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(another_request)
        await anyio.lowlevel.checkpoint()
        before = turns
        found = await kept_in_slices(range(10), slow_even)
        during = turns - before
        done.set()
    assert found == [0, 2, 4, 6, 8]
    assert during >= 5  # a turn after each slice, not one at the end
