"""One fact with the versions it replaced, and retconning it: the new text is the DM's, the
old one stays as history and is no longer served."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.desk.fact_actions import fact_history, get_fact, retcon_fact, source_lines
from glyphoxa_mcp.desk.name_actions import names_by_id
from glyphoxa_mcp.domain.models import MAX_FACT_CHARS
from glyphoxa_mcp.web.desk import acting, campaign_desk, render
from glyphoxa_mcp.web.forms import Form


class Retcon(Form):
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_FACT_CHARS)]


async def fact_page(request: Request) -> Response:
    desk = await campaign_desk(request)
    fact_id = int(request.path_params["fact_id"])
    fact = await get_fact(desk, fact_id)
    versions = await fact_history(desk, fact_id)
    names = await names_by_id(desk)
    return render(
        request,
        "fact.html",
        {
            "fact": fact,
            "versions": list(reversed(versions)),
            "line": (await source_lines(desk, [fact]))[fact.id],
            "names": names,
        },
    )


async def retcon(request: Request) -> Response:
    desk = await campaign_desk(request)
    fact_id = int(request.path_params["fact_id"])
    async with acting(request, f"/c/{desk.campaign_id}/facts/{fact_id}") as act:
        form = await act.form(Retcon)
        new = await retcon_fact(desk, fact_id, form.text)
        act.done(
            f"fact:{fact_id} is retconned: fact:{new.id} now reads {new.text!r} (confirmed); "
            "the old version is kept as history."
        )
    return act.response


ROUTES = [
    Route("/c/{campaign}/facts/{fact_id:int}", fact_page, methods=["GET"]),
    Route("/c/{campaign}/facts/{fact_id:int}/retcon", retcon, methods=["POST"]),
]
