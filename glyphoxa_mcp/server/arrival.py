"""When an HTTP request reached the server: a tier's deadline counts from then, not from when
the MCP layers handed the call to the tier gate, which on a busy server can be much later.

`StampArrival` is the outermost ASGI middleware; the SDK hands the tool call the Starlette
request of its HTTP exchange (`ServerRequestContext.request`), whose scope carries the stamp.
On stdio there is no request and no stamp: the deadline counts from the gate.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Receive, Scope, Send

ARRIVED = "glyphoxa.arrived"


class StampArrival:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[ARRIVED] = time.monotonic()
        await self.app(scope, receive, send)


def seconds_since_arrival(request: object) -> float:
    """How long ago the HTTP request carrying a call (a Starlette request, or its ASGI scope)
    reached the server; 0 without one."""
    scope = request if isinstance(request, dict) else getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return 0.0
    arrived = scope.get(ARRIVED)
    if not isinstance(arrived, float):
        return 0.0
    return max(time.monotonic() - arrived, 0.0)
