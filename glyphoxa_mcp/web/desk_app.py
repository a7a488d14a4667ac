"""The DM's desk as one ASGI application: the pages, their static files, the browser sessions,
and the same Host and Origin checks as the MCP server (`HostGuard`) in front of all of it.

Every page that reads or changes a campaign calls the DM's desk (`desk/`), as the commands do,
so a rule (the rumour threshold, who may know what, what a retcon keeps) lives in one place.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from glyphoxa_mcp.app import App
from glyphoxa_mcp.errors import (
    DatabaseUnavailableError,
    FormInvalid,
    InvalidInputError,
    NotFoundError,
)
from glyphoxa_mcp.server.http_guard import HostGuard, HostRules
from glyphoxa_mcp.server.token_gate import TokenGate
from glyphoxa_mcp.web.browser_sessions import BrowserSessions, SignInLimits
from glyphoxa_mcp.web.desk import (
    SESSION_STATE,
    Desk,
    Forbidden,
    SignInNeeded,
    browser_session,
    desk_of,
)
from glyphoxa_mcp.web.forms import FormTokenMismatch
from glyphoxa_mcp.web.routes import (
    archive_download,
    as_npc,
    deleting,
    entities,
    facts,
    review,
    search,
    sessions,
    signing_in,
)
from glyphoxa_mcp.web.session_cookies import BodyTooLarge, SessionCookies
from glyphoxa_mcp.web.templating import STATIC, make_templates


def error_page(request: Request, status_code: int, title: str, message: str) -> Response:
    """A page that says what went wrong in words, never with a traceback."""
    desk = desk_of(request)
    session = request.scope.get("state", {}).get(SESSION_STATE)
    context: dict[str, Any] = {
        "request": request,
        "status_code": status_code,
        "title": title,
        "message": message,
        "form_token": session.form_token if session else "",
        "notes": session.take_notes() if session else [],
        "auth": desk.gate.required,
        "signed_in": bool(session and session.signed_in),
        "campaign": None,
        "here": request.url.path,
    }
    return desk.templates.TemplateResponse(request, "error.html", context, status_code=status_code)


async def sign_in_first(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SignInNeeded)
    if exc.reason:
        browser_session(request).note("error", exc.reason)
    here = request.url.path if request.method == "GET" else ""
    target = f"/login?next={quote(here, safe='/')}" if here else "/login"
    return RedirectResponse(target, status_code=303)


async def forbidden(request: Request, exc: Exception) -> Response:
    return error_page(request, 403, "Not for this sign-in", str(exc))


async def stale_form(request: Request, _exc: Exception) -> Response:
    return error_page(
        request,
        403,
        "This form has expired",
        "The form was not sent from a page of this session (it may be older than your last "
        "sign-in, or come from another site). Reload the page and try again; nothing changed.",
    )


async def bad_input(request: Request, exc: Exception) -> Response:
    problems = exc.problems if isinstance(exc, FormInvalid) else [str(exc)]
    return error_page(request, 400, "That request breaks a rule", "; ".join(problems))


async def not_found(request: Request, exc: Exception) -> Response:
    return error_page(request, 404, "Not found", str(exc))


async def unavailable(request: Request, _exc: Exception) -> Response:
    return error_page(
        request,
        503,
        "Memory unavailable",
        "The campaign database is not answering. Try again shortly; nothing changed.",
    )


async def too_large(request: Request, _exc: Exception) -> Response:
    return error_page(request, 413, "Too much at once", "The form sent more than 1 MB.")


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = "No such page." if exc.status_code == 404 else str(exc.detail)
    return error_page(request, exc.status_code, "Not here", message)


async def internal_error(request: Request, _exc: Exception) -> Response:
    # The server logs the traceback (uvicorn, as the exception passes on); the page never
    # shows it.
    return error_page(
        request,
        500,
        "Something went wrong",
        "The desk could not finish this; the server's log says why. Nothing was half-written.",
    )


def desk_routes() -> list[BaseRoute]:
    return [
        *signing_in.ROUTES,
        *review.ROUTES,
        *entities.ROUTES,
        *facts.ROUTES,
        *sessions.ROUTES,
        *as_npc.ROUTES,
        *search.ROUTES,
        *deleting.ROUTES,
        *archive_download.ROUTES,
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]


def build_desk(
    app: App,
    gate: TokenGate,
    rules: HostRules,
    *,
    only_campaign: str | None = None,
    sign_ins: SignInLimits | None = None,
) -> ASGIApp:
    """The desk over `app`. With token auth (`gate.required`), a browser signs in with a DM
    token and may use that campaign; without, every campaign (or `only_campaign`)."""
    sessions = BrowserSessions(sign_ins)
    desk = Desk(app, sessions, gate, make_templates(), only_campaign)
    starlette = Starlette(
        routes=desk_routes(),
        middleware=[Middleware(SessionCookies, sessions=sessions)],
        exception_handlers={
            SignInNeeded: sign_in_first,
            Forbidden: forbidden,
            FormTokenMismatch: stale_form,
            InvalidInputError: bad_input,
            NotFoundError: not_found,
            DatabaseUnavailableError: unavailable,
            BodyTooLarge: too_large,
            HTTPException: http_error,
            Exception: internal_error,
        },
    )
    starlette.state.desk = desk
    return HostGuard(starlette, rules)
