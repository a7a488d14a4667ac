"""The HTTP server's socket, bound before anything else starts."""

from __future__ import annotations

import asyncio
import socket

import pytest

from glyphoxa_mcp.errors import ConfigurationError
from glyphoxa_mcp.server.hosting import listening_socket


def test_a_port_in_use_is_one_clear_error() -> None:
    with listening_socket("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        taken.listen()
        with pytest.raises(ConfigurationError, match=rf"127\.0\.0\.1:{port}: the port is in use"):
            listening_socket("127.0.0.1", port)


async def test_accepted_connections_send_small_replies_at_once() -> None:
    """TCP_NODELAY on every accepted connection: asyncio sets it only on sockets made for
    TCP, and without it a reply on a kept-alive connection waits for the peer's delayed ACK."""
    nodelay = asyncio.get_running_loop().create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            sock = transport.get_extra_info("socket")
            nodelay.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    with listening_socket("127.0.0.1", 0) as sock:
        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            assert await asyncio.wait_for(nodelay, 10) != 0
            writer.close()
