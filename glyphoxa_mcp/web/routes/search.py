"""Search across everything the DM keeps: entities by name or alias, facts and relationships
(and lore) as `memory.search_facts` ranks them in the DM's view, transcript lines by their
words, and sessions by title or summary."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.domain.models import MAX_NAME_CHARS
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.web.desk import campaign_memory, desk_of, render
from glyphoxa_mcp.web.forms import Form, query_of

FOUND_PER_KIND = 20


class Search(Form):
    q: Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)] | None = None


async def search_page(request: Request) -> Response:
    memory = await campaign_memory(request)
    wanted = query_of(request, Search)
    found: dict[str, object] = {}
    if wanted.q:
        view = await desk_of(request).app.view(memory.campaign_id)
        holding = wanted.q.casefold()
        found = {
            "entities": await memory.graph.find_entities(name=wanted.q, limit=FOUND_PER_KIND),
            "facts": (
                await view.search_facts(wanted.q, clamp(FOUND_PER_KIND, FOUND_PER_KIND))
            ).results,
            "lines": [m.entry for m in await memory.log.search(wanted.q, limit=FOUND_PER_KIND)],
            "sessions": [
                s
                for s in await memory.sessions.list()
                if holding in f"{s.id} {s.title or ''} {s.summary or ''}".casefold()
            ][:FOUND_PER_KIND],
        }
    return render(request, "search.html", {"q": wanted.q or "", "found": found})


ROUTES = [Route("/c/{campaign}/search", search_page, methods=["GET"])]
