"""Completions for the resource templates' arguments, so a client can offer the campaign's
NPCs and sessions as the user types. Only what the server's viewer may see is offered."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import (
    CompleteRequestParams,
    CompleteResult,
    Completion,
    CompletionArgument,
    ResourceTemplateReference,
)

from glyphoxa_mcp.concurrency import concurrently
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.server.resource_uris import HOT_URI_TEMPLATE, PREFETCH_URI_TEMPLATE
from glyphoxa_mcp.server.sdk_hooks import add_request_handler
from glyphoxa_mcp.views.view import View

# The protocol's limit on the values of one completion.
MAX_VALUES = 100
TEMPLATES = (HOT_URI_TEMPLATE, PREFETCH_URI_TEMPLATE)
NOTHING = Completion(values=[], total=0, has_more=False)


def starting_with(candidates: list[str], partial: str) -> Completion:
    """Candidates that start with what was typed (case-insensitively), in order."""
    typed = partial.casefold()
    matching = [value for value in candidates if value.casefold().startswith(typed)]
    return Completion(
        values=matching[:MAX_VALUES], total=len(matching), has_more=len(matching) > MAX_VALUES
    )


def register_completions(server: MCPServer, view: View) -> None:
    async def complete(ctx: Any, params: CompleteRequestParams) -> CompleteResult:
        return CompleteResult(completion=await completion(params.ref, params.argument))

    async def completion(ref: object, argument: CompletionArgument) -> Completion:
        if not isinstance(ref, ResourceTemplateReference) or ref.uri not in TEMPLATES:
            return NOTHING
        if argument.name == "npc_id":
            if view.npc_id is not None:
                return starting_with([view.npc_id], argument.value)
            npcs = (await view.scope()).by_type.get(EntityType.NPC, ())
            return starting_with([npc.id for npc in npcs], argument.value)
        if argument.name == "session" and ref.uri == HOT_URI_TEMPLATE:
            sessions, reading = await concurrently(view.memory.sessions.dm_only_by_id, view.reading)
            withheld = reading.withheld_among(sessions)
            # The latest first: the one being played is the likeliest.
            readable = [s for s in reversed(sessions) if s not in withheld]
            return starting_with(readable, argument.value)
        return NOTHING

    add_request_handler(server, "completion/complete", CompleteRequestParams, complete)
