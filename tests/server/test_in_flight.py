"""What a stopping stdio server waits for: the calls and reads under way, not open streams."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio

from glyphoxa_mcp.server.in_flight import InFlight


async def test_a_stop_waits_for_calls_but_not_for_a_subscription_stream() -> None:
    in_flight = InFlight()
    release = anyio.Event()

    async def answered_later(_ctx: Any) -> dict[str, Any]:
        await release.wait()
        return {}

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(in_flight, SimpleNamespace(method="subscriptions/listen"), answered_later)
        await anyio.sleep(0)
        assert await in_flight.drained(0.01)  # an open stream is not waited for
        tasks.start_soon(in_flight, SimpleNamespace(method="tools/call"), answered_later)
        await anyio.sleep(0)
        assert in_flight.count == 1 and not await in_flight.drained(0.01)

        async def drain() -> None:
            assert await in_flight.drained(5)

        tasks.start_soon(drain)
        await anyio.sleep(0)
        release.set()
    assert in_flight.count == 0
