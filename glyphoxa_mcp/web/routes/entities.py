"""Entities: the list (a page at a time, searchable), and one entity with its attributes,
relationships and facts, where each came from, and who may know it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.desk import entity_actions, secret_actions
from glyphoxa_mcp.desk.fact_actions import rumour_rule, source_lines
from glyphoxa_mcp.desk.name_actions import name_resolver, names_by_id
from glyphoxa_mcp.domain.models import MAX_NAME_CHARS, Visibility
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN, EntityType
from glyphoxa_mcp.domain.wording import comma_separated
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.relationship_sentences import seen_from
from glyphoxa_mcp.web.desk import acting, campaign_desk, render
from glyphoxa_mcp.web.forms import Form, query_of
from glyphoxa_mcp.web.paging import MAX_PAGE, Paging, page_link

MAX_KNOWERS = 200


class EntityList(Form):
    q: Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)] | None = None
    type: EntityType | None = None
    page: int = Field(default=1, ge=1, le=MAX_PAGE)


class VisibilityEdit(Form):
    kind: Literal["entity", "relationship", "fact"]
    item: Annotated[str, StringConstraints(pattern=KEY_PATTERN)]
    secret: bool = False
    known_by: Annotated[str, StringConstraints(max_length=10_000)] = ""


async def entity_list(request: Request) -> Response:
    desk = await campaign_desk(request)
    wanted = query_of(request, EntityList)
    paging = Paging(wanted.page, 0)
    found = await entity_actions.entity_page(
        desk, offset=paging.offset, limit=paging.size, holding=wanted.q, type=wanted.type
    )
    paging = Paging(wanted.page, found.total)
    params = {"q": wanted.q, "type": wanted.type.value if wanted.type else None}
    return render(
        request,
        "entities.html",
        {
            "entities": found.entities,
            "paging": paging,
            "page_url": lambda n: page_link(request.url.path, params, n),
            "q": wanted.q or "",
            "type": wanted.type.value if wanted.type else "",
            "entity_types": [t.value for t in EntityType],
        },
    )


async def entity_page(request: Request) -> Response:
    desk = await campaign_desk(request)
    details = await entity_actions.entity_details(desk, str(request.path_params["entity_id"]))
    entity, snapshot = details.entity, details.snapshot
    rumours = await rumour_rule(desk)
    names = await names_by_id(desk)
    lines = await source_lines(desk, snapshot.facts)
    return render(
        request,
        "entity.html",
        {
            "entity": entity,
            "relationships": [
                (related, seen_from(entity.name, related)) for related in snapshot.relationships
            ],
            "facts": snapshot.facts,
            "lines": lines,
            "names": names,
            "is_rumour": rumours.is_rumour,
        },
    )


def _item_id(kind: str, item: str) -> str | int:
    if kind == "entity":
        return item
    if not item.isdigit():
        raise InvalidInputError(f"item: a {kind}'s id is a number, not {item!r}.", field="item")
    return int(item)


async def set_visibility(request: Request) -> Response:
    desk = await campaign_desk(request)
    async with acting(request, f"/c/{desk.campaign_id}/entities") as act:
        form = await act.form(VisibilityEdit)
        named = comma_separated(form.known_by)
        if len(named) > MAX_KNOWERS:
            raise InvalidInputError(
                f"known_by: at most {MAX_KNOWERS} NPCs; leave it empty for the DM alone.",
                field="known_by",
            )
        entities = await name_resolver(desk)
        knowers = tuple(dict.fromkeys(entities.resolve(n, "known_by").id for n in named))
        visibility = Visibility(secret=form.secret, known_by=knowers)
        await secret_actions.set_visibility(
            desk, form.kind, _item_id(form.kind, form.item), visibility
        )
        who = ", ".join(knowers) if knowers else ("the DM only" if form.secret else "everyone")
        label = form.item if form.kind == "entity" else f"{form.kind} {form.item}"
        act.done(f"{label} is now {'secret, ' if form.secret else ''}known by {who}.")
    return act.response


ROUTES = [
    Route("/c/{campaign}/entities", entity_list, methods=["GET"]),
    Route("/c/{campaign}/entities/{entity_id}", entity_page, methods=["GET"]),
    Route("/c/{campaign}/visibility", set_visibility, methods=["POST"]),
]
