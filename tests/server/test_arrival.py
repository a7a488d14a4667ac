"""The arrival stamp: a call's deadline counts from when its HTTP request reached the server."""

from __future__ import annotations

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from glyphoxa_mcp.server.arrival import StampArrival, seconds_since_arrival


async def slow_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    await anyio.sleep(0.05)  # the layers between the door and the tier gate
    await JSONResponse({"since": seconds_since_arrival(Request(scope))})(scope, receive, send)


async def test_the_time_since_arrival_counts_from_the_outermost_middleware() -> None:
    transport = httpx.ASGITransport(app=StampArrival(slow_endpoint))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        since = (await client.get("/")).json()["since"]
    assert 0.05 <= since < 1.0


async def test_without_an_http_request_nothing_has_been_waited() -> None:
    assert seconds_since_arrival(None) == 0.0
    transport = httpx.ASGITransport(app=slow_endpoint)  # no stamp
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        assert (await client.get("/")).json()["since"] == 0.0
