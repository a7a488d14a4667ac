"""Search across everything the DM keeps: entities by name or alias, facts and relationships
(and lore) as `memory.search_facts` ranks them in the DM's view, transcript lines by their
words, and sessions by title or summary."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.desk.search_actions import Found, search_everything
from glyphoxa_mcp.domain.models import MAX_NAME_CHARS
from glyphoxa_mcp.web.desk import campaign_desk, render
from glyphoxa_mcp.web.forms import Form, query_of

FOUND_PER_KIND = 20


class Search(Form):
    q: Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)] | None = None


async def search_page(request: Request) -> Response:
    desk = await campaign_desk(request)
    wanted = query_of(request, Search)
    found: Found | None = None
    if wanted.q:
        found = await search_everything(desk, wanted.q, FOUND_PER_KIND)
    return render(request, "search.html", {"q": wanted.q or "", "found": found})


ROUTES = [Route("/c/{campaign}/search", search_page, methods=["GET"])]
