"""Sessions: the list, and one session with its summary (the DM may rewrite it) and its
transcript, the names correction put back marked, and lines (or the whole session) kept to
the DM."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AwareDatetime, Field, StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.desk import session_actions
from glyphoxa_mcp.desk.scene_actions import (
    line_hearers,
    remove_scene,
    session_scenes,
    set_line_hearers,
    set_scene,
)
from glyphoxa_mcp.desk.secret_actions import keep_lines_to_dm, keep_session_to_dm
from glyphoxa_mcp.desk.session_actions import (
    get_session,
    list_sessions,
    session_lines,
    summaries_to_review,
    write_summary,
)
from glyphoxa_mcp.domain.models import MAX_SUMMARY_CHARS
from glyphoxa_mcp.domain.wording import comma_separated, counted
from glyphoxa_mcp.web.desk import acting, campaign_desk, render
from glyphoxa_mcp.web.forms import Form, NoFields, query_of
from glyphoxa_mcp.web.paging import MAX_PAGE, Paging, page_holding, page_link
from glyphoxa_mcp.web.transcript import segments

LINES_PER_PAGE = 100
MAX_MARKED = 500


class SessionList(Form):
    page: int = Field(default=1, ge=1, le=MAX_PAGE)


class Transcript(Form):
    q: Annotated[str, StringConstraints(max_length=200)] | None = None
    page: int = Field(default=1, ge=1, le=MAX_PAGE)
    line: int | None = Field(default=None, ge=1, description="Show the page holding this line.")


class SummaryEdit(Form):
    summary: Annotated[str, StringConstraints(min_length=1, max_length=MAX_SUMMARY_CHARS)]


class LinesMark(Form):
    lines: list[int] = Field(min_length=1, max_length=MAX_MARKED)
    dm_only: Literal["yes", "no"]


class SessionMark(Form):
    dm_only: Literal["yes", "no"]


Names = Annotated[str, StringConstraints(max_length=2000)]


class SceneEdit(Form):
    at: AwareDatetime
    present: Names | None = None
    location: Annotated[str, StringConstraints(max_length=200)] | None = None
    title: Annotated[str, StringConstraints(max_length=200)] | None = None
    remove: Literal["yes"] | None = None


class LinesHeard(Form):
    lines: list[int] = Field(min_length=1, max_length=MAX_MARKED)
    heard_by: Names | None = None
    scene: Literal["yes"] | None = None


def session_url(campaign: str, session_id: str) -> str:
    return f"/c/{campaign}/sessions/{session_id}"


async def session_list(request: Request) -> Response:
    desk = await campaign_desk(request)
    wanted = query_of(request, SessionList)
    sessions = await list_sessions(desk)
    paging = Paging(wanted.page, len(sessions))
    return render(
        request,
        "sessions.html",
        {
            "to_review": set(await summaries_to_review(desk)),
            "sessions": paging.of(sessions),
            "paging": paging,
            "page_url": lambda n: page_link(request.url.path, {}, n),
        },
    )


async def session_page(request: Request) -> Response:
    desk = await campaign_desk(request)
    session = await get_session(desk, str(request.path_params["session_id"]))
    wanted = query_of(request, Transcript)
    lines = await session_lines(desk, session.id)
    if wanted.q:
        holding = wanted.q.casefold()
        lines = [e for e in lines if holding in f"{e.speaker_name}: {e.text}".casefold()]
    page = wanted.page
    if wanted.line is not None:
        index = next((i for i, e in enumerate(lines) if e.id == wanted.line), None)
        page = page_holding(index, LINES_PER_PAGE) if index is not None else page
    paging = Paging(page, len(lines), LINES_PER_PAGE)
    shown = paging.of(lines)
    scenes = await session_scenes(desk, session.id)
    hearers = await line_hearers(desk, session.id)
    return render(
        request,
        "session.html",
        {
            "session": session,
            "summary_to_review": session.id in await summaries_to_review(desk),
            "lines": [(e, segments(e.raw_text, e.text, e.corrections)) for e in shown],
            "scenes": scenes,
            "hearers": hearers,
            "paging": paging,
            "page_url": lambda n: page_link(request.url.path, {"q": wanted.q}, n),
            "q": wanted.q or "",
            "wanted_line": wanted.line,
        },
    )


async def edit_summary(request: Request) -> Response:
    desk = await campaign_desk(request)
    session_id = str(request.path_params["session_id"])
    async with acting(request, session_url(desk.campaign_id, session_id)) as act:
        form = await act.form(SummaryEdit)
        await write_summary(desk, session_id, form.summary)
        act.done(
            f"The summary of {session_id!r} is now yours: marking lines DM-only later keeps it."
        )
    return act.response


async def summary_reviewed(request: Request) -> Response:
    desk = await campaign_desk(request)
    session_id = str(request.path_params["session_id"])
    async with acting(request, session_url(desk.campaign_id, session_id)) as act:
        await act.form(NoFields)
        await session_actions.summary_reviewed(desk, session_id)
        act.done(f"The summary of {session_id!r} is reviewed.")
    return act.response


async def mark_transcript_lines(request: Request) -> Response:
    desk = await campaign_desk(request)
    session_id = str(request.path_params["session_id"])
    async with acting(request, session_url(desk.campaign_id, session_id)) as act:
        form = await act.form(LinesMark)
        dm_only = form.dm_only == "yes"
        marked = await keep_lines_to_dm(desk, form.lines, dm_only)
        what = "kept to the DM" if dm_only else "shown to NPCs again"
        text = f"{counted(len(marked.lines), 'line')} {what}."
        if marked.summaries_rewritten:
            text += " The summary was written again without the DM-only lines."
        if marked.waiting_for_llm:
            text += " Run `glyphoxa-mcp session end --retry-llm` to have the LLM write it again."
        act.done(text)
    return act.response


async def mark_whole_session(request: Request) -> Response:
    desk = await campaign_desk(request)
    session_id = str(request.path_params["session_id"])
    async with acting(request, session_url(desk.campaign_id, session_id)) as act:
        form = await act.form(SessionMark)
        dm_only = form.dm_only == "yes"
        marked = await keep_session_to_dm(desk, session_id, dm_only)
        if marked.hidden is not None:
            act.done(
                f"Session {session_id!r} is DM-only; its episode and what it taught "
                f"({counted(marked.hidden.facts, 'fact')}, "
                f"{counted(marked.hidden.relationships, 'relationship')}) "
                "are now known to the DM only."
            )
        else:
            act.done(
                f"Session {session_id!r} is readable by NPCs again; facts and relationships "
                "learned in it stay secret until you reveal each."
            )
    return act.response


async def edit_scene(request: Request) -> Response:
    desk = await campaign_desk(request)
    session_id = str(request.path_params["session_id"])
    async with acting(request, session_url(desk.campaign_id, session_id)) as act:
        form = await act.form(SceneEdit)
        if form.remove:
            await remove_scene(desk, session_id, form.at)
            act.done("The scene is removed: its lines belong to the scene before it.")
        else:
            scene = await set_scene(
                desk,
                session_id,
                form.at,
                present=None if form.present is None else comma_separated(form.present),
                location=form.location or None,
                title=form.title or None,
            )
            who = ", ".join(scene.present) or "the players only"
            act.done(
                f"Scene at {scene.started_at:%H:%M:%S}: {who} present. Its lines are heard again."
            )
    return act.response


async def set_heard_by(request: Request) -> Response:
    desk = await campaign_desk(request)
    session_id = str(request.path_params["session_id"])
    async with acting(request, session_url(desk.campaign_id, session_id)) as act:
        form = await act.form(LinesHeard)
        npcs = None if form.scene else comma_separated(form.heard_by)
        heard = await set_line_hearers(desk, form.lines, npcs)
        act.done(
            f"{counted(len(heard), 'line')} now heard by "
            + (
                "those present in their scene."
                if npcs is None
                else (", ".join(npcs) or "no NPC") + "."
            )
        )
    return act.response


ROUTES = [
    Route("/c/{campaign}/sessions", session_list, methods=["GET"]),
    Route("/c/{campaign}/sessions/{session_id}", session_page, methods=["GET"]),
    Route("/c/{campaign}/sessions/{session_id}/summary", edit_summary, methods=["POST"]),
    Route(
        "/c/{campaign}/sessions/{session_id}/summary-reviewed", summary_reviewed, methods=["POST"]
    ),
    Route("/c/{campaign}/sessions/{session_id}/lines", mark_transcript_lines, methods=["POST"]),
    Route("/c/{campaign}/sessions/{session_id}/dm-only", mark_whole_session, methods=["POST"]),
    Route("/c/{campaign}/sessions/{session_id}/scenes", edit_scene, methods=["POST"]),
    Route("/c/{campaign}/sessions/{session_id}/heard-by", set_heard_by, methods=["POST"]),
]
