"""memory.query_entities: structured questions to the knowledge graph."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.server.state import state_of, tool_errors
from glyphoxa_mcp.views.limits import MAX_COUNT, MAX_DEPTH, MAX_NAME, MAX_RELATION, clamp
from glyphoxa_mcp.views.results import QueryEntitiesResult

DESCRIPTION = (
    "Look up people, places, factions, items, quests and lore in the campaign's knowledge "
    "graph. Give a name (misspellings and aliases are fine), a type, or related_to (an entity "
    "whose connections you want, optionally only through one relation, up to `depth` hops). "
    "Returns each entity with its attributes and relationships (fewer each when many "
    "entities match; related_to lists one entity's connections); relationships marked "
    "unconfirmed are rumours."
)


async def query_entities(
    ctx: Context[Any, Any],
    name: Annotated[
        str | None,
        Field(
            description="Name or alias of the entity, as heard; misspellings are tolerated.",
            max_length=MAX_NAME,
        ),
    ] = None,
    type: Annotated[
        EntityType | None,
        Field(description="Only entities of this type."),
    ] = None,
    related_to: Annotated[
        str | None,
        Field(description="Name of an entity whose connections to list.", max_length=MAX_NAME),
    ] = None,
    relation: Annotated[
        str | None,
        Field(
            description="With related_to: follow only this relationship type, for example "
            "MEMBER_OF, KNOWS, LOCATED_AT, OWNS, ALLIED_WITH, HOSTILE_TO.",
            max_length=MAX_RELATION,
        ),
    ] = None,
    depth: Annotated[
        int,
        Field(
            description="With related_to: how many hops to follow (1-3 by tier).",
            ge=0,
            le=MAX_DEPTH,
        ),
    ] = 1,
    limit: Annotated[
        int, Field(description="Most entities to return (1-50 by tier).", ge=0, le=MAX_COUNT)
    ] = 10,
) -> QueryEntitiesResult:
    state = state_of(ctx)
    with tool_errors():
        return await state.view.query_entities(
            clamp(limit, state.policy.max_results),
            clamp(depth, state.policy.max_depth),
            name=name,
            entity_type=type,
            related_to=related_to,
            relation=relation,
        )
