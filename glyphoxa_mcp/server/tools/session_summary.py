"""memory.get_session_summary: what happened in a past session."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.server.results import EntityRef, SessionSummaryResult
from glyphoxa_mcp.server.state import state_of, tool_errors
from glyphoxa_mcp.storage.models import Session

DESCRIPTION = (
    "The summary of a past session: what was decided, revealed and promised, with its date, "
    "title and the entities involved. Give session_id, or sessions_ago (1 is the last "
    "finished session, 2 the one before); with neither you get the last session."
)
LISTED_IDS = 10


async def get_session_summary(
    ctx: Context[Any, Any],
    session_id: Annotated[
        str | None, Field(description="The id of the session.", max_length=128)
    ] = None,
    sessions_ago: Annotated[
        int | None,
        Field(description="1 is the last finished session, 2 the one before, and so on."),
    ] = None,
) -> SessionSummaryResult:
    state = state_of(ctx)
    sessions = state.memory.sessions
    with tool_errors():
        if session_id is not None and sessions_ago is not None:
            raise InvalidInputError(
                "Give session_id or sessions_ago, not both.", field="sessions_ago"
            )
        if session_id is not None and session_id.strip():
            session = await known_session(state.memory.sessions, session_id.strip())
        else:
            session = await sessions.finished(1 if sessions_ago is None else sessions_ago)
        redactor = (await state.view()).redactor
        summary, dropped = (None, 0)
        if session.summary is not None:
            summary, dropped = redactor.redact(session.summary)
        title = session.title
        if title is not None and redactor.mentions_hidden(title):
            title, dropped = None, dropped + 1
        entities = await state.memory.queries.session_entities(session.id, state.npc_id)
        note = None
        if session.summary is None:
            note = (
                "This session has no summary yet; it is written when the session ends. "
                "memory.search_sessions finds what was said in it."
            )
        return SessionSummaryResult(
            session_id=session.id,
            title=title,
            started_at=session.started_at,
            ended_at=session.ended_at,
            summary=summary,
            summary_source=session.summary_source,
            entities=[EntityRef(id=e.id, name=e.name, type=e.type.value) for e in entities],
            redacted_sentences=dropped,
            scope=state.scope,
            note=note,
        )


async def known_session(sessions: Any, session_id: str) -> Session:
    try:
        return await sessions.get(session_id)
    except NotFoundError:
        known = await sessions.list()
        recent = [s.id for s in known[-LISTED_IDS:]]
        hint = (
            f"Known sessions (latest {len(recent)}): {', '.join(recent)}; or use sessions_ago."
            if recent
            else "This campaign has no sessions yet."
        )
        raise NotFoundError(f"No session {session_id!r}. {hint}") from None
