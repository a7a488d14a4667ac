"""The MCP logging capability: a client sets the level it wants (`logging/setLevel`) and
hears, as log notifications, what happened to its calls that the results alone do not say
(a call cancelled at the tier's deadline, say)."""

from __future__ import annotations

import logging
import warnings
import weakref
from typing import Any

import anyio
from mcp import types
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning

from glyphoxa_mcp.server.sdk_hooks import add_request_handler, connection_of

log = logging.getLogger(__name__)

LEVELS: tuple[types.LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
# What a client hears before it asks for a level.
DEFAULT_LEVEL: types.LoggingLevel = "warning"


class ClientLogging:
    """The level each client session asked for; shared by the servers of one process."""

    def __init__(self) -> None:
        self._levels: weakref.WeakKeyDictionary[Any, types.LoggingLevel] = (
            weakref.WeakKeyDictionary()
        )

    def attach(self, server: MCPServer) -> None:
        add_request_handler(
            server, "logging/setLevel", types.SetLevelRequestParams, self._set_level
        )

    async def _set_level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        self._levels[connection_of(ctx.session)] = params.level
        return types.EmptyResult()

    async def send(self, session: Any, level: types.LoggingLevel, message: str) -> None:
        """Tell the client, if it listens at `level`; a client that has gone is no error.
        Not tied to the call it is about: over streamable HTTP an answer is one JSON body
        (server/endpoints.py), so a message tied to its call would be dropped; untied, it
        goes on the session's own stream (the one stream of stdio and SSE)."""
        wanted = self._levels.get(connection_of(session), DEFAULT_LEVEL)
        if LEVELS.index(level) < LEVELS.index(wanted):
            return
        try:
            # Deprecated by the 2026-07-28 protocol, which drops log notifications; handshake
            # clients (Claude Desktop, the Inspector) still read them.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await session.send_log_message(
                    level=level,
                    data=message,
                    logger="glyphoxa-memory",
                )
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the client has gone
            log.debug("could not send a log message to a client", exc_info=True)
