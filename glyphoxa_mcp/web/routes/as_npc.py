""" "As an NPC sees it": pick an NPC and a tier, and see its hot context and what each tool
answers it for a query."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.domain.models import MAX_NAME_CHARS
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.entity_resolver import EntityResolver
from glyphoxa_mcp.views.limits import MAX_QUERY
from glyphoxa_mcp.web.desk import browser_session, campaign_memory, desk_of, render
from glyphoxa_mcp.web.forms import Form, query_of
from glyphoxa_mcp.web.npc_lens import look_as

# NPCs offered to pick from as the DM types; any entity's id, name or alias is taken.
NPCS_LISTED = 500


class Lens(Form):
    npc: Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)] | None = None
    tier: Tier = Tier.STANDARD
    query: Annotated[str, StringConstraints(max_length=MAX_QUERY)] | None = None


async def as_npc_page(request: Request) -> Response:
    memory = await campaign_memory(request)
    wanted = query_of(request, Lens)
    lens = None
    if wanted.npc:
        try:
            npc = EntityResolver(await memory.known_entities()).resolve(wanted.npc, "npc")
        except InvalidInputError as exc:
            browser_session(request).note("error", str(exc))
        else:
            lens = await look_as(
                desk_of(request).app, memory.campaign_id, npc.id, wanted.tier, wanted.query
            )
    npcs = await memory.graph.find_entities(type=EntityType.NPC, limit=NPCS_LISTED)
    return render(
        request,
        "as_npc.html",
        {
            "lens": lens,
            "npcs": npcs,
            "npc": wanted.npc or "",
            "tier": wanted.tier.value,
            "tiers": [t.value for t in Tier],
            "query": wanted.query or "",
        },
    )


ROUTES = [Route("/c/{campaign}/as-npc", as_npc_page, methods=["GET"])]
