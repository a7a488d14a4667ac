"""What every page of the desk shares: the application, who may use which campaign, the
browser session, rendering a page, and acting on a form."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from glyphoxa_mcp.app import App
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.errors import DatabaseUnavailableError, GlyphoxaError, NotFoundError
from glyphoxa_mcp.server.token_gate import Refused, TokenGate
from glyphoxa_mcp.web.browser_sessions import BrowserSession, BrowserSessions
from glyphoxa_mcp.web.forms import read_form

M = TypeVar("M", bound=BaseModel)
SESSION_STATE = "browser_session"


class SignInNeeded(Exception):
    """The page needs a DM token: the browser is sent to sign in, then back."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or "Sign in with the campaign's DM token.")
        self.reason = reason


class Forbidden(Exception):
    """Signed in, but not for this campaign."""


@dataclass(frozen=True)
class Desk:
    app: App
    sessions: BrowserSessions
    gate: TokenGate
    templates: Jinja2Templates
    only_campaign: str | None = None
    """Serve this campaign alone (`web --campaign C`)."""


def desk_of(request: Request) -> Desk:
    desk = request.app.state.desk
    assert isinstance(desk, Desk), "build_desk puts the Desk in the app's state"
    return desk


def browser_session(request: Request) -> BrowserSession:
    session = request.scope["state"][SESSION_STATE]
    assert isinstance(session, BrowserSession), "SessionCookies starts one for every page"
    return session


def replace_session(request: Request, session: BrowserSession) -> None:
    """From now on the browser holds `session` (its cookie is set on this response)."""
    request.scope["state"][SESSION_STATE] = session


async def campaign_desk(request: Request) -> CampaignDesk:
    """The campaign the path names, when this browser may use it: signed in with its DM
    token (checked again now: a revoked token stops here), or without auth on loopback."""
    desk = desk_of(request)
    campaign = str(request.path_params["campaign"])
    if not re.match(KEY_PATTERN, campaign) or desk.only_campaign not in (None, campaign):
        raise NotFoundError(f"No campaign {campaign!r} here.")
    session = browser_session(request)
    if desk.gate.required:
        if session.dm_token is None:
            raise SignInNeeded()
        if session.campaign != campaign:
            raise Forbidden(
                f"You signed in for campaign {session.campaign!r}; sign in again with the DM "
                f"token of {campaign!r} to use it."
            )
        try:
            await desk.gate.admit(f"Bearer {session.dm_token}", Viewer.dm(campaign), None)
        except Refused as refusal:
            desk.sessions.end(session)
            replace_session(request, desk.sessions.visitor())
            raise SignInNeeded(refusal.message) from None
    return await CampaignDesk.of(desk.app, campaign)


def render(
    request: Request, template: str, context: dict[str, Any], status_code: int = 200
) -> Response:
    desk = desk_of(request)
    session = browser_session(request)
    campaign = request.path_params.get("campaign")
    shared = {
        "form_token": session.form_token,
        "notes": session.take_notes(),
        "auth": desk.gate.required,
        "signed_in": session.signed_in,
        "campaign": campaign,
        "here": request.url.path + (f"?{request.url.query}" if request.url.query else ""),
    }
    return desk.templates.TemplateResponse(
        request, template, shared | context, status_code=status_code
    )


class Acting:
    """One form's action: its outcome is a note on the next page, which is where the form
    came from (`next`) or `default`."""

    def __init__(self, request: Request, default: str) -> None:
        self.request = request
        self.session = browser_session(request)
        self.back = default

    async def form(self, model: type[M]) -> M:
        form, back = await read_form(self.request, model, self.session)
        self.back = back or self.back
        return form

    def done(self, text: str) -> None:
        self.session.note("ok", text)

    @property
    def response(self) -> Response:
        return RedirectResponse(self.back, status_code=303)


@contextlib.asynccontextmanager
async def acting(request: Request, default: str) -> AsyncIterator[Acting]:
    """Run a form's action; an error the DM can act on (a field broken, an item gone)
    becomes a note on the page instead of an error page. Nothing is half-written: each
    action writes in one transaction or not at all."""
    act = Acting(request, default)
    try:
        yield act
    except DatabaseUnavailableError:
        raise
    except GlyphoxaError as exc:
        act.session.note("error", str(exc))
