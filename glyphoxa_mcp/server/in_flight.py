"""Requests being answered now, so a stopping server can let them finish first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

# What a stop waits for: answers being worked out. A subscription stream stays open for as
# long as its client listens, so it is not waited for.
COUNTED = frozenset({"tools/call", "resources/read", "completion/complete"})


class InFlight:
    """MCP middleware counting the calls and reads under way."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = anyio.Event()
        self._idle.set()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method not in COUNTED:
            return await call_next(ctx)
        if self.count == 0:
            self._idle = anyio.Event()
        self.count += 1
        try:
            return await call_next(ctx)
        finally:
            self.count -= 1
            if self.count == 0:
                self._idle.set()

    async def drained(self, within_s: float) -> bool:
        """Wait until no request is under way, at most `within_s`; whether none is."""
        with anyio.move_on_after(within_s):
            await self._idle.wait()
        return self.count == 0


# What calls under way get to finish when serving stops: uvicorn's graceful shutdown over
# HTTP and SSE, GracefulStop over stdio.
SHUTDOWN_GRACE_S = 5
STOP_POLL_S = 0.05


class GracefulStop:
    """A signal asks stdio serving to stop: the calls under way get up to SHUTDOWN_GRACE_S
    to finish, then the input ends and the server with it. `request` runs in a signal
    handler, so it only sets a flag that `when_requested` (a task) watches."""

    def __init__(self, end_input: Callable[[], None], in_flight: InFlight) -> None:
        self.end_input = end_input
        self.in_flight = in_flight
        self.requested = False

    def request(self) -> None:
        self.requested = True

    async def when_requested(self) -> None:
        while not self.requested:
            await anyio.sleep(STOP_POLL_S)
        await self.in_flight.drained(SHUTDOWN_GRACE_S)
        self.end_input()
