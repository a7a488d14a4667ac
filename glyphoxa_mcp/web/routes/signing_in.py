"""The way in: the campaigns (without auth), signing in with a DM token, signing out."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from glyphoxa_mcp.desk.campaign_actions import list_campaigns
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.server.token_gate import Refused
from glyphoxa_mcp.web.browser_sessions import SignInsFull
from glyphoxa_mcp.web.desk import (
    acting,
    browser_session,
    desk_of,
    render,
    replace_session,
)
from glyphoxa_mcp.web.forms import Form, NoFields, local_path, query_of


class SignIn(Form):
    """A DM token alone: it names its campaign."""

    token: Annotated[str, StringConstraints(min_length=1, max_length=200)]


class SignInPage(Form):
    next: Annotated[str, StringConstraints(max_length=2000)] | None = None


def campaign_home(campaign: str) -> str:
    return f"/c/{campaign}/review"


async def home(request: Request) -> Response:
    desk = desk_of(request)
    session = browser_session(request)
    if desk.gate.required:
        if session.campaign is None:
            return RedirectResponse("/login", status_code=303)
        return RedirectResponse(campaign_home(session.campaign), status_code=303)
    if desk.only_campaign is not None:
        return RedirectResponse(campaign_home(desk.only_campaign), status_code=303)
    campaigns = await list_campaigns(desk.app.db)
    return render(request, "campaigns.html", {"campaigns": campaigns})


async def sign_in_page(request: Request) -> Response:
    desk = desk_of(request)
    if not desk.gate.required:
        return RedirectResponse("/", status_code=303)
    page = query_of(request, SignInPage)
    return render(
        request,
        "sign_in.html",
        {"only_campaign": desk.only_campaign, "next_page": local_path(page.next) or ""},
    )


async def sign_in(request: Request) -> Response:
    desk = desk_of(request)
    if not desk.gate.required:
        return RedirectResponse("/", status_code=303)
    async with acting(request, "/login") as act:
        form = await act.form(SignIn)
        authorization = f"Bearer {form.token}"
        try:
            campaign = (await desk.gate.identify(authorization)).viewer.campaign
            await desk.gate.admit(authorization, Viewer.dm(campaign), None)
        except Refused as refusal:
            act.session.note("error", f"token: {refusal.message}")
            act.back = "/login"
            return act.response
        if desk.only_campaign not in (None, campaign):
            act.session.note(
                "error",
                f"This desk serves campaign {desk.only_campaign!r} only; the token is the DM's "
                f"of {campaign!r}.",
            )
            act.back = "/login"
            return act.response
        try:
            signed_in = desk.sessions.sign_in(act.session, campaign, form.token)
        except SignInsFull as full:
            act.session.note("error", str(full))
            act.back = "/login"
            return act.response
        replace_session(request, signed_in)
        signed_in.note("ok", f"Signed in as the DM of {campaign!r}.")
        if act.back == "/login" or not act.back.startswith(f"/c/{campaign}/"):
            act.back = campaign_home(campaign)
    return act.response


async def sign_out(request: Request) -> Response:
    desk = desk_of(request)
    async with acting(request, "/") as act:
        await act.form(NoFields)
        desk.sessions.end(act.session)
        fresh = desk.sessions.visitor()
        replace_session(request, fresh)
        fresh.note("ok", "Signed out.")
        act.back = "/login" if desk.gate.required else "/"
    return act.response


ROUTES = [
    Route("/", home, methods=["GET"]),
    Route("/login", sign_in_page, methods=["GET"]),
    Route("/login", sign_in, methods=["POST"]),
    Route("/logout", sign_out, methods=["POST"]),
]
