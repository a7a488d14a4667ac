""" "As an NPC sees it": pick an NPC by name and a tier, and see its hot context, what each
tool answers it for a query, and what it knows of each session."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.desk.campaign_actions import campaign_settings
from glyphoxa_mcp.desk.entity_actions import list_entities
from glyphoxa_mcp.desk.name_actions import name_resolver
from glyphoxa_mcp.desk.session_actions import list_sessions
from glyphoxa_mcp.domain.models import MAX_NAME_CHARS
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.views.limits import MAX_QUERY
from glyphoxa_mcp.web.desk import browser_session, campaign_desk, desk_of, render
from glyphoxa_mcp.web.forms import Form, query_of
from glyphoxa_mcp.web.npc_lens import look_as

# NPCs offered in the picker; with more, the DM picks by typing a name (any NPC's name,
# alias or id is taken).
NPCS_LISTED = 1_000
# Sessions whose knowledge is tabled, the latest.
SESSIONS_TABLED = 50


class Lens(Form):
    npc: Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)] | None = None
    tier: Tier = Tier.STANDARD
    query: Annotated[str, StringConstraints(max_length=MAX_QUERY)] | None = None


async def as_npc_page(request: Request) -> Response:
    desk = await campaign_desk(request)
    wanted = query_of(request, Lens)
    lens = None
    sessions = await list_sessions(desk)
    if wanted.npc:
        try:
            npc = (await name_resolver(desk)).resolve(wanted.npc, "npc")
        except InvalidInputError as exc:
            browser_session(request).note("error", str(exc))
        else:
            lens = await look_as(
                desk_of(request).app,
                desk.campaign_id,
                npc,
                wanted.tier,
                wanted.query,
                sessions[::-1][:SESSIONS_TABLED],
                (await campaign_settings(desk)).knowledge,
            )
    npcs = await list_entities(desk, EntityType.NPC, limit=NPCS_LISTED + 1)
    return render(
        request,
        "as_npc.html",
        {
            "lens": lens,
            "npcs": npcs[:NPCS_LISTED],
            "more_npcs": len(npcs) > NPCS_LISTED,
            "npc": lens.npc.id if lens else wanted.npc or "",
            "tier": wanted.tier.value,
            "tiers": [t.value for t in Tier],
            "query": wanted.query or "",
            "sessions_total": len(sessions),
        },
    )


ROUTES = [Route("/c/{campaign}/as-npc", as_npc_page, methods=["GET"])]
