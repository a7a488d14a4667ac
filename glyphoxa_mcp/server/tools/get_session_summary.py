"""memory.get_session_summary: what happened in a past session."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from glyphoxa_mcp.server.state import state_of, tool_errors
from glyphoxa_mcp.views.limits import MAX_ID, MAX_SESSIONS_AGO
from glyphoxa_mcp.views.results import SessionSummaryResult

DESCRIPTION = (
    "The summary of a past session: what was decided, revealed and promised, with its date, "
    "title and the entities involved. Give session_id, or sessions_ago (1 is the last "
    "finished session, 2 the one before); with neither you get the last session."
)


async def get_session_summary(
    ctx: Context[Any, Any],
    session_id: Annotated[
        str | None, Field(description="The id of the session.", max_length=MAX_ID)
    ] = None,
    sessions_ago: Annotated[
        int | None,
        Field(
            description="1 is the last finished session, 2 the one before, and so on.",
            ge=1,
            le=MAX_SESSIONS_AGO,
        ),
    ] = None,
) -> SessionSummaryResult:
    with tool_errors():
        return await state_of(ctx).view.session_summary(session_id, sessions_ago)
