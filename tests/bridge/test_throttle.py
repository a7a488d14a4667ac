"""A stream of partial transcripts makes at most one pre-fetch per interval, always ending
with the newest partial."""

from __future__ import annotations

import itertools

import anyio

from glyphoxa_mcp.bridge.throttle import Throttle


async def test_partials_are_fetched_at_most_once_per_interval_newest_last() -> None:
    fetched: list[str] = []
    started: list[float] = []
    results: list[str] = []

    async def fetch(partial: str) -> str:
        fetched.append(partial)
        # When the throttle started it: a clock read here instead may come late after a
        # pause of the process (a collection) between the two, and the next one not.
        started.append(throttle.started_at)
        return f"context for {partial}"

    async def deliver(result: str) -> None:
        results.append(result)

    partials = [f"do you remember the {'v' * n}ault" for n in range(30)]
    async with anyio.create_task_group() as tasks:
        throttle = Throttle(fetch, deliver, tasks, interval_s=0.1)
        for partial in partials:
            throttle.heard(partial)
            await anyio.sleep(0.01)
    # However slow this machine ran, no two fetches started closer than the interval.
    assert len(fetched) >= 2
    assert all(later - earlier >= 0.0999 for earlier, later in itertools.pairwise(started))
    assert fetched[0] == partials[0] and fetched[-1] == partials[-1]
    assert results[-1] == f"context for {partials[-1]}"
    assert throttle.fetches == len(fetched)


async def test_a_failing_fetch_does_not_stop_the_next() -> None:
    calls: list[str] = []

    async def fetch(partial: str) -> str:
        calls.append(partial)
        if partial == "first":
            raise RuntimeError("the server went away")
        return partial

    delivered: list[str] = []

    async def deliver(result: str) -> None:
        delivered.append(result)

    async with anyio.create_task_group() as tasks:
        throttle = Throttle(fetch, deliver, tasks, interval_s=0.05)
        throttle.heard("first")
        await anyio.sleep(0.01)
        throttle.heard("second")
    assert calls == ["first", "second"] and delivered == ["second"]
