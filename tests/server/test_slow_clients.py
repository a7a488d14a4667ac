"""Clients that never finish a request are disconnected within the configured timeouts:
measured with real sockets against the served app on 127.0.0.1."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import anyio
import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.server.http_limits import HttpTimeouts
from tests.server.http_serving import load_demo, serving

pytestmark = pytest.mark.e2e

TIMEOUTS = HttpTimeouts(header_s=1.0, body_s=1.5)
# Time the event loop of a busy test machine may add before the server acts.
LEEWAY_S = 1.5


@pytest.fixture
async def address(db256: Database) -> AsyncIterator[tuple[str, int]]:
    await load_demo(db256)
    async with serving(db256, auth=False, timeouts=TIMEOUTS) as base:
        host, port = base.removeprefix("http://").split(":")
        yield host, int(port)


async def held_for(address: tuple[str, int], sent: bytes) -> tuple[float, bytes]:
    """Send `sent` and nothing more; how long until the server closed, and what it said."""
    async with await anyio.connect_tcp(*address) as stream:
        started = time.monotonic()
        await stream.send(sent)
        answer = b""
        with anyio.fail_after(10):
            try:
                while chunk := await stream.receive():
                    answer += chunk
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                pass
    return time.monotonic() - started, answer


async def test_a_client_that_never_finishes_its_header_is_disconnected(
    address: tuple[str, int],
) -> None:
    half_a_header = b"POST /c/demo/npc/ysolde/fast/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: "

    took, answer = await held_for(address, half_a_header)

    assert TIMEOUTS.header_s - 0.1 <= took <= TIMEOUTS.header_s + LEEWAY_S
    assert answer == b""


async def test_a_client_that_never_finishes_its_body_is_answered_408_and_disconnected(
    address: tuple[str, int],
) -> None:
    head = (
        b"POST /c/demo/npc/ysolde/fast/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n"
    )

    took, answer = await held_for(address, head + b'{"jsonrpc": "2.0",')

    assert TIMEOUTS.body_s - 0.1 <= took <= TIMEOUTS.body_s + LEEWAY_S
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"did not arrive within 1.5 s" in answer


async def test_a_kept_alive_connection_gets_the_header_timeout_again(
    address: tuple[str, int],
) -> None:
    health = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    took, answer = await held_for(address, health + b"GET /healthz HTTP/1.1\r\nHost: ")

    assert answer.startswith(b"HTTP/1.1 200 ") and answer.count(b"HTTP/1.1") == 1
    assert took <= TIMEOUTS.header_s + LEEWAY_S


async def test_a_prompt_client_and_a_long_answer_are_not_cut(address: tuple[str, int]) -> None:
    """An SSE stream outlives both timeouts: they are about what the client sends."""
    async with await anyio.connect_tcp(*address) as stream:
        await stream.send(
            b"GET /c/demo/npc/ysolde/fast/sse HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Accept: text/event-stream\r\n\r\n"
        )
        answer = b""
        with anyio.move_on_after(TIMEOUTS.header_s + TIMEOUTS.body_s + 0.5):
            while chunk := await stream.receive():
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 ") and b"event: endpoint" in answer
        # Still open: the server has not closed it.
        with anyio.move_on_after(0.1):
            await stream.receive()
