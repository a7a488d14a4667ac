"""At most so many open sessions and SSE streams per token: past it a clear 429, and a slot
comes back when a session is deleted, a stream is closed, or a session times out idle."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
import httpx
import pytest
from starlette.types import Receive, Scope, Send

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.server.session_caps import IDLE_MARGIN_S, SessionCaps
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from tests.server.http_serving import load_demo, serving

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream"}
PATH = "/c/demo/npc/ysolde/standard"
CAP = 2


@dataclass
class Door:
    base: str
    http: httpx.AsyncClient
    tokens: dict[str, dict[str, str]]

    async def open_session(self, who: str = "ysolde") -> httpx.Response:
        return await self.http.post(
            f"{self.base}{PATH}/mcp", json=INITIALIZE, headers=MCP_HEADERS | self.tokens[who]
        )

    async def delete_session(self, session_id: str) -> httpx.Response:
        headers = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"}
        return await self.http.delete(
            f"{self.base}{PATH}/mcp", headers=headers | self.tokens["ysolde"]
        )

    @contextlib.asynccontextmanager
    async def sse_stream(self) -> AsyncIterator[httpx.Response]:
        # A client of its own: leaving closes its connection, as a client going away does.
        async with (
            httpx.AsyncClient(timeout=10) as own,
            own.stream("GET", f"{self.base}{PATH}/sse", headers=self.tokens["ysolde"]) as stream,
        ):
            yield stream


@pytest.fixture
async def door(db256: Database) -> AsyncIterator[Door]:
    await load_demo(db256)
    tokens = AccessTokens(db256)
    _, ysolde = await tokens.create(Viewer.npc("demo", "ysolde"))
    _, other = await tokens.create(Viewer.npc("demo", "ysolde"), label="a second bridge")
    async with serving(db256, max_sessions_per_token=CAP) as base, httpx.AsyncClient() as http:
        yield Door(
            base,
            http,
            {
                "ysolde": {"Authorization": f"Bearer {ysolde.token}"},
                "other": {"Authorization": f"Bearer {other.token}"},
            },
        )


def assert_cap_refusal(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    message = response.json()["error"]["message"]
    assert f"{CAP} sessions and SSE streams open, its most" in message
    assert "--max-sessions-per-token" in message and "GLYPHOXA_MAX_SESSIONS_PER_TOKEN" in message
    assert "Close one to free a slot" in message


async def until_ok(attempt: object) -> httpx.Response:
    """A slot is freed once the server has seen the client go: ask until it has (bounded)."""
    assert callable(attempt)
    with anyio.fail_after(10):
        while (response := await attempt()).status_code == 429:
            await anyio.sleep(0.05)
    return response  # type: ignore[no-any-return]


@pytest.mark.e2e
async def test_a_token_past_its_cap_is_refused_until_it_deletes_a_session(door: Door) -> None:
    opened = [await door.open_session() for _ in range(CAP)]
    assert all(r.status_code == 200 for r in opened)

    assert_cap_refusal(await door.open_session())
    assert (await door.open_session("other")).status_code == 200  # the cap is per token

    assert (await door.delete_session(opened[0].headers["mcp-session-id"])).status_code == 200
    assert (await door.open_session()).status_code == 200
    assert_cap_refusal(await door.open_session())


@pytest.mark.e2e
async def test_sse_streams_count_too_and_a_closed_stream_frees_its_slot(door: Door) -> None:
    async with door.sse_stream() as first:
        assert first.status_code == 200
        async with door.sse_stream() as second:
            assert second.status_code == 200
            async with door.sse_stream() as third:
                await third.aread()
                assert_cap_refusal(third)
            assert_cap_refusal(await door.open_session())
        # The second stream's client went away.
        assert (await until_ok(door.open_session)).status_code == 200


async def test_a_session_idle_past_the_sdks_timeout_frees_its_slot() -> None:
    now = [0.0]
    caps = SessionCaps(per_token=1, idle_s=60, clock=lambda: now[0])
    made = iter(["s1", "s2"])

    async def sdk_opening_a_session(scope: Scope, receive: Receive, send: Send) -> None:
        # What the SDK answers an initialize with: the new session's id in a header.
        headers = [(b"mcp-session-id", next(made).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})

    async def opening(status: list[int]) -> None:
        scope = {"type": "http", "method": "POST", "headers": [], "path": "/mcp"}

        async def send(message: dict[str, object]) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))  # type: ignore[call-overload]

        async def receive() -> dict[str, object]:
            return {"type": "http.request", "body": b"", "more_body": False}

        await caps.serve("token a", "/mcp", sdk_opening_a_session, scope, receive, send)  # type: ignore[arg-type]

    statuses: list[int] = []
    await opening(statuses)
    now[0] += 60
    await opening(statuses)  # idle as long as the SDK allows: still held
    now[0] += IDLE_MARGIN_S + 1
    await opening(statuses)  # the SDK has ended it by now

    assert statuses == [200, 429, 200]
