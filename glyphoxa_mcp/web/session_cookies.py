"""ASGI middleware in front of every page: the browser session its cookie names (a visitor,
stored nowhere, without one), the cookie set again when the page changed the session
(signing in or out), a visitor's notes kept for its next page, headers that keep pages out
of caches, frames and other sites' scripts, and a bound on what a request may send."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.requests import cookie_parser
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from glyphoxa_mcp.web.browser_sessions import COOKIE, BrowserSession, BrowserSessions
from glyphoxa_mcp.web.desk import SESSION_STATE

STATIC_PREFIX = "/static/"
MAX_BODY_BYTES = 1024 * 1024
PAGE_HEADERS = {
    # Pages hold the campaign's secrets: never cached, framed, or scripted from elsewhere.
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


class BodyTooLarge(Exception):
    pass


def cookie_header(session: BrowserSession, secure: bool) -> str:
    flags = "; Secure" if secure else ""
    return f"{COOKIE}={session.id}; Path=/; HttpOnly; SameSite=Strict{flags}"


class SessionCookies:
    def __init__(self, app: ASGIApp, sessions: BrowserSessions) -> None:
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or str(scope["path"]).startswith(STATIC_PREFIX):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if int(headers.get("content-length") or 0) > MAX_BODY_BYTES:
            await PlainTextResponse("The request is too large.", status_code=413)(
                scope, receive, send
            )
            return
        given = cookie_parser(headers.get("cookie", "")).get(COOKIE)
        session = self.sessions.for_cookie(given)
        scope.setdefault("state", {})[SESSION_STATE] = session
        secure = scope.get("scheme") == "https"
        received = 0

        async def bounded_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > MAX_BODY_BYTES:
                raise BodyTooLarge()
            return message

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                response_headers = MutableHeaders(scope=message)
                for name, value in PAGE_HEADERS.items():
                    response_headers[name] = value
                current = scope["state"][SESSION_STATE]
                # The page is made by now: what it did not show waits for the next one.
                self.sessions.keep(current)
                if current.id != given:
                    response_headers.append("Set-Cookie", cookie_header(current, secure))
            await send(message)

        await self.app(scope, bounded_receive, send_with_headers)
