"""One fact with the versions it replaced, and retconning it: the new text is the DM's, the
old one stays as history and is no longer served."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.domain.models import MAX_FACT_CHARS
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.web.desk import acting, campaign_memory, desk_of, render
from glyphoxa_mcp.web.forms import Form
from glyphoxa_mcp.web.source_lines import source_lines


class Retcon(Form):
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_FACT_CHARS)]


async def fact_page(request: Request) -> Response:
    memory = await campaign_memory(request)
    fact_id = int(request.path_params["fact_id"])
    fact = await memory.graph.get_fact(fact_id)
    versions = await memory.curation.history(fact_id)
    names = {e.id: e.name for e in await memory.known_entities()}
    return render(
        request,
        "fact.html",
        {
            "fact": fact,
            "versions": list(reversed(versions)),
            "line": (await source_lines(memory, [fact]))[fact.id],
            "names": names,
        },
    )


async def retcon(request: Request) -> Response:
    memory = await campaign_memory(request)
    fact_id = int(request.path_params["fact_id"])
    async with acting(request, f"/c/{memory.campaign_id}/facts/{fact_id}") as act:
        form = await act.form(Retcon)
        new = await memory.curation.retcon(fact_id, form.text)
        # Stored already; the vector follows, or waits for the backfill if the embedder fails.
        await embed_new(memory.db, desk_of(request).app.embedder, memory.campaign_id)
        act.done(
            f"fact:{fact_id} is retconned: fact:{new.id} now reads {new.text!r} (confirmed); "
            "the old version is kept as history."
        )
    return act.response


ROUTES = [
    Route("/c/{campaign}/facts/{fact_id:int}", fact_page, methods=["GET"]),
    Route("/c/{campaign}/facts/{fact_id:int}/retcon", retcon, methods=["POST"]),
]
