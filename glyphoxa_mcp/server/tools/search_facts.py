"""memory.search_facts: sourced facts, events and relationships, with when they happened, and
the passages of the DM's lore documents."""

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
from glyphoxa_mcp.views.results import SearchFactsResult

DESCRIPTION = (
    "Search what is known to be true in the campaign: facts, events and relationships, each "
    "with its source, confidence and when it happened, and passages of the campaign's lore "
    "(kind 'lore', with their document and heading). Filter by entity, session, or time "
    "(after/before take an ISO date for real time, or 'day N' for the story's calendar); "
    "lore comes only with unfiltered searches. Results marked unconfirmed are rumours."
)


async def search_facts(
    ctx: Context[Any, Any],
    query: Annotated[
        str, Field(description="What to look for, in plain words.", max_length=MAX_QUERY)
    ],
    entity: Annotated[
        str | None,
        Field(description="Only facts about this entity (name, alias or id).", max_length=MAX_NAME),
    ] = None,
    after: Annotated[
        str | None,
        Field(
            description="Only from then on: an ISO date or time, or a story day like 'day 12'.",
            max_length=MAX_TIME,
        ),
    ] = None,
    before: Annotated[
        str | None,
        Field(
            description="Only before then: an ISO date or time, or a story day like 'day 12'.",
            max_length=MAX_TIME,
        ),
    ] = None,
    session_id: Annotated[
        str | None, Field(description="Only facts from this session.", max_length=MAX_ID)
    ] = None,
    top_k: Annotated[
        int,
        Field(description="How many results to return (1-50 by tier).", ge=0, le=MAX_COUNT),
    ] = 5,
) -> SearchFactsResult:
    state = state_of(ctx)
    with tool_errors():
        return await state.view.search_facts(
            query,
            clamp(top_k, state.policy.max_results),
            entity=entity,
            after=after,
            before=before,
            session_id=session_id,
        )
