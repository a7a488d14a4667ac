"""memory.search_sessions: what was said in past sessions, found by meaning and by words."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from glyphoxa_mcp.server.state import state_of, tool_errors
from glyphoxa_mcp.views.limits import (
    MAX_COUNT,
    MAX_ID,
    MAX_NAME,
    MAX_QUERY,
    MAX_TIME,
    clamp,
)
from glyphoxa_mcp.views.results import SearchSessionsResult

DESCRIPTION = (
    "Search the transcripts of past sessions for what was said: by meaning and by words. "
    "Use it for 'do you remember…', promises, names mentioned in passing, or what someone "
    "said. Filter by session, speaker, NPC or time; a date in the query ('on 7 July 2023') "
    "favours what was said then. Each result is a passage with speaker labels, its session "
    "and time."
)


async def search_sessions(
    ctx: Context[Any, Any],
    query: Annotated[
        str, Field(description="What to look for, in plain words.", max_length=MAX_QUERY)
    ],
    top_k: Annotated[
        int,
        Field(description="How many passages to return (1-50 by tier).", ge=0, le=MAX_COUNT),
    ] = 5,
    session_id: Annotated[
        str | None, Field(description="Only this session.", max_length=MAX_ID)
    ] = None,
    speaker: Annotated[
        str | None,
        Field(description="Only what this speaker said (name or id).", max_length=MAX_NAME),
    ] = None,
    npc_id: Annotated[
        str | None, Field(description="Only what this NPC said (its id).", max_length=MAX_ID)
    ] = None,
    after: Annotated[
        str | None,
        Field(description="Only from this time on (ISO date or time).", max_length=MAX_TIME),
    ] = None,
    before: Annotated[
        str | None,
        Field(description="Only before this time (ISO date or time).", max_length=MAX_TIME),
    ] = None,
) -> SearchSessionsResult:
    state = state_of(ctx)
    with tool_errors():
        return await state.view.search_sessions(
            query,
            clamp(top_k, state.policy.max_results),
            session_id=session_id,
            speaker=speaker,
            npc_id=npc_id,
            after=after,
            before=before,
            graph_expansion=state.policy.graph_expansion,
        )
