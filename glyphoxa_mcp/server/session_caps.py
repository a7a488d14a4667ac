"""At most so many open streamable HTTP sessions and SSE streams per token.

A session or stream holds memory and a task on the server until it ends; without a bound one
token held hundreds. Each admitted request passes through `SessionCaps.serve`, which counts:

- an SSE stream (GET .../sse) while it is open: until the client goes away, or its token is
  revoked (the request is cancelled then);
- a streamable HTTP session from the answer that gives it its id (`mcp-session-id`) until the
  client deletes it (DELETE), the SDK answers that it no longer knows it (404), or it has been
  idle past the SDK's idle timeout (`SESSION_IDLE_S`, which `endpoints` gives the SDK): no
  request of it in flight, an open GET stream included, for that long.

With the cap reached, a request that would open another gets 429 and a JSON-RPC error saying
the cap, how to raise it, and that closing a session frees a slot. Requests of the stateless
protocol generation (2026-07-28) open no session and are not counted. Without auth, the
path's viewer stands for the token.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mcp.types import ErrorData, JSONRPCError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.server.http_limits import DEFAULT_MAX_SESSIONS_PER_TOKEN

# The SDK ends a session no request has touched for this long (its own default, named here
# so the count below follows the same rule).
SESSION_IDLE_S = 30 * 60
# A slot is freed a little after the SDK's timer, never before the session is gone.
IDLE_MARGIN_S = 5.0
SERVER_ERROR = -32000  # JSON-RPC's range for errors an implementation defines
MCP_PATH = "/mcp"
SSE_PATH = "/sse"
SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _may_open_session(scope: Scope) -> bool:
    """A POST without a session id opens one when it is a handshake-era initialize; the
    stateless generation names itself in its version header and never does."""
    version = _header(scope["headers"], VERSION_HEADER)
    return scope["method"] == "POST" and (version is None or version in HANDSHAKE_PROTOCOL_VERSIONS)


@dataclass
class _Session:
    in_flight: int
    idle_since: float


class SessionCaps:
    def __init__(
        self,
        per_token: int = DEFAULT_MAX_SESSIONS_PER_TOKEN,
        idle_s: float = SESSION_IDLE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_token = per_token
        self.idle_s = idle_s
        self.clock = clock
        self._sessions: dict[str, dict[str, _Session]] = {}
        self._streams: dict[str, int] = {}
        self._opening: dict[str, int] = {}

    def open_count(self, holder: str) -> int:
        """Sessions and streams `holder` has open (or is opening) now."""
        now = self.clock()
        sessions = self._sessions.get(holder, {})
        for session_id, session in list(sessions.items()):
            if session.in_flight == 0 and now - session.idle_since > self.idle_s + IDLE_MARGIN_S:
                del sessions[session_id]
        if not sessions:
            self._sessions.pop(holder, None)
        return len(sessions) + self._streams.get(holder, 0) + self._opening.get(holder, 0)

    def refusal(self) -> Response:
        message = (
            f"This token has "
            f"{counted(self.per_token, 'session or SSE stream', 'sessions and SSE streams')} "
            "open, its most. Close one to free a slot (DELETE a streamable HTTP session, or "
            "end an SSE stream), or "
            "raise the cap: serve --max-sessions-per-token N / GLYPHOXA_MAX_SESSIONS_PER_TOKEN."
        )
        body = JSONRPCError(
            jsonrpc="2.0", id=None, error=ErrorData(code=SERVER_ERROR, message=message)
        )
        return Response(
            body.model_dump_json(by_alias=True, exclude_unset=True),
            status_code=429,
            media_type="application/json",
        )

    async def serve(
        self, holder: str, route_path: str, app: ASGIApp, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """Run `app` for this request of `holder`, counting what it opens; 429 at the cap."""
        if route_path == SSE_PATH and scope["method"] == "GET":
            await self._stream(holder, app, scope, receive, send)
        elif route_path != MCP_PATH:
            await app(scope, receive, send)
        elif (session_id := _header(scope["headers"], SESSION_HEADER)) is not None:
            await self._in_session(holder, session_id, app, scope, receive, send)
        elif _may_open_session(scope):
            await self._opening_session(holder, app, scope, receive, send)
        else:
            await app(scope, receive, send)

    async def _stream(
        self, holder: str, app: ASGIApp, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if self.open_count(holder) >= self.per_token:
            await self.refusal()(scope, receive, send)
            return
        self._streams[holder] = self._streams.get(holder, 0) + 1
        try:
            await app(scope, receive, send)
        finally:
            left = self._streams[holder] - 1
            if left:
                self._streams[holder] = left
            else:
                del self._streams[holder]

    async def _opening_session(
        self, holder: str, app: ASGIApp, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if self.open_count(holder) >= self.per_token:
            await self.refusal()(scope, receive, send)
            return
        # A slot is held while the request runs, so concurrent ones cannot pass the cap.
        self._opening[holder] = self._opening.get(holder, 0) + 1
        opened: _Session | None = None

        def release_opening() -> None:
            left = self._opening[holder] - 1
            if left:
                self._opening[holder] = left
            else:
                del self._opening[holder]

        async def watch(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and opened is None:
                session_id = _header(message.get("headers", []), SESSION_HEADER)
                if message["status"] < 400 and session_id is not None:
                    opened = _Session(in_flight=1, idle_since=self.clock())
                    self._sessions.setdefault(holder, {})[session_id] = opened
                    release_opening()
            await send(message)

        try:
            await app(scope, receive, watch)
        finally:
            if opened is None:
                release_opening()
            else:
                opened.in_flight -= 1
                opened.idle_since = self.clock()

    async def _in_session(
        self,
        holder: str,
        session_id: str,
        app: ASGIApp,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        session = self._sessions.get(holder, {}).get(session_id)
        if session is not None:
            session.in_flight += 1
        status: int | None = None

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await app(scope, receive, watch)
        finally:
            if session is not None:
                session.in_flight -= 1
                session.idle_since = self.clock()
            deleted = scope["method"] == "DELETE" and status is not None and status < 300
            if deleted or status == 404:
                self._sessions.get(holder, {}).pop(session_id, None)
