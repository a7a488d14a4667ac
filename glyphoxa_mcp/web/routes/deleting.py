"""Deleting from the desk, as `transcript forget`, `session delete` and `campaign delete` do
(desk/session_actions.py, desk/campaign_actions.py): one line of a transcript, a whole
session, or the campaign. A session or a campaign is deleted only when its id is typed to
confirm."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.desk.campaign_actions import delete_campaign
from glyphoxa_mcp.desk.session_actions import delete_session, forget_line
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.web.desk import acting, campaign_desk, desk_of, replace_session
from glyphoxa_mcp.web.forms import Form, NoFields


class Confirmed(Form):
    confirm: Annotated[str, StringConstraints(max_length=128)] = ""


class CampaignDeletion(Confirmed):
    branches: Literal["refuse", "delete", "keep"] = "refuse"


def check_typed(form: Confirmed, wanted: str, what: str) -> None:
    if form.confirm != wanted:
        raise InvalidInputError(
            f"confirm: type the {what}'s id, {wanted}, to delete it; nothing was deleted.",
            field="confirm",
        )


async def forget(request: Request) -> Response:
    desk = await campaign_desk(request)
    entry_id = int(request.path_params["entry_id"])
    async with acting(request, f"/c/{desk.campaign_id}/sessions") as act:
        await act.form(NoFields)
        forgotten = await forget_line(desk, entry_id)
        text = f"Forgot line:{entry_id}; {counted(forgotten.passages_removed, 'passage')} held it."
        if forgotten.summary != "none":
            text += " The summary waits for your review" + (
                ", written again without the line." if forgotten.summary == "rewritten" else "."
            )
        if forgotten.passages_pending is not None:
            text += (
                f" The lines left are not indexed again yet ({forgotten.passages_pending}): "
                f"glyphoxa-mcp process {forgotten.session_id}"
            )
        act.done(text)
    return act.response


async def delete_a_session(request: Request) -> Response:
    desk = await campaign_desk(request)
    session_id = str(request.path_params["session_id"])
    sessions = f"/c/{desk.campaign_id}/sessions"
    async with acting(request, f"{sessions}/{session_id}") as act:
        check_typed(await act.form(Confirmed), session_id, "session")
        deleted = await delete_session(desk, session_id)
        kept = deleted.facts_kept + deleted.relationships_kept
        act.done(
            f"Deleted session {session_id!r}: {counted(deleted.lines, 'line')}, "
            f"{counted(deleted.passages, 'passage')}, {counted(deleted.facts_deleted, 'fact')} "
            f"and {counted(deleted.relationships_deleted, 'relationship')} learned in it"
            + (", its episode" if deleted.episode_deleted else "")
            + (
                f", {counted(deleted.proposals_deleted, 'proposal')}"
                if deleted.proposals_deleted
                else ""
            )
            + "."
            + (f" Kept {kept} that you decided, no longer linked to it." if kept else "")
        )
        act.back = sessions
    return act.response


async def delete_the_campaign(request: Request) -> Response:
    desk = await campaign_desk(request)
    pages = desk_of(request)
    async with acting(request, f"/c/{desk.campaign_id}/review") as act:
        form = await act.form(CampaignDeletion)
        check_typed(form, desk.campaign_id, "campaign")
        deleted = await delete_campaign(desk.db, desk.campaign_id, form.branches)
        also = ""
        if deleted.branches_deleted:
            also += f" and its branches {', '.join(deleted.branches_deleted)}"
        if deleted.branches_kept:
            also += f"; its branches {', '.join(deleted.branches_kept)} are campaigns of their own"
        # Its DM token went with it: this browser is signed out.
        pages.sessions.end(act.session)
        fresh = pages.sessions.visitor()
        replace_session(request, fresh)
        fresh.note(
            "ok",
            f"Deleted campaign {deleted.campaign_id!r}{also}: "
            f"{counted(deleted.sessions, 'session')}, {counted(deleted.lines, 'line')}, "
            f"{counted(deleted.entities, 'entity')}.",
        )
        act.back = "/"
    return act.response


ROUTES = [
    Route("/c/{campaign}/lines/{entry_id:int}/forget", forget, methods=["POST"]),
    Route("/c/{campaign}/sessions/{session_id}/delete", delete_a_session, methods=["POST"]),
    Route("/c/{campaign}/delete", delete_the_campaign, methods=["POST"]),
]
