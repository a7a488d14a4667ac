"""The two places where we reach past the MCP SDK's public surface (mcp 2.3), each in one
function that says why; everything else of the SDK is used through its public API (tools
reach MCPServer through its constructor).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel


def add_request_handler(
    server: MCPServer,
    method: str,
    params_type: type[BaseModel],
    handler: Callable[[Any, Any], Awaitable[Any]],
) -> None:
    """Serve `method` on `server` with `handler`, which also advertises its capability.

    MCPServer has no hook for `logging/setLevel` or the handshake era's
    `resources/subscribe` and `resources/unsubscribe`. Its `completion()` decorator (untyped)
    answers a completion that fails with an error of its own ("Error completing argument
    ..."), where the handler registered here is answered as any failed request is, as it
    always was. The low-level server's registry (`add_request_handler`) is public;
    MCPServer's reference to its low-level server (`_lowlevel_server`) is not."""
    server._lowlevel_server.add_request_handler(method, params_type, handler)


def connection_of(session: Any) -> Any:
    """What stays the same across one client's requests: the connection a request came on.

    The SDK makes a ServerSession per request, over the connection it keeps for the client
    (`_connection`), and shows that connection to tools (`ctx.connection`) but not to
    low-level handlers or middleware. A session without one stands for itself."""
    return getattr(session, "_connection", session)
