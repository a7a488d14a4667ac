"""The review queue: rumours below the campaign's threshold, held imports and a session's
proposed entities; confirm or reject them one by one or many at once, or edit one."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.desk import review_actions
from glyphoxa_mcp.desk.campaign_actions import campaign_size
from glyphoxa_mcp.desk.name_actions import names_by_id
from glyphoxa_mcp.desk.session_actions import summaries_to_review
from glyphoxa_mcp.domain.models import MAX_NAME_CHARS
from glyphoxa_mcp.domain.review_items import ReviewItem
from glyphoxa_mcp.domain.vocabulary import EntityType, checked_relationship_type
from glyphoxa_mcp.web.desk import acting, campaign_desk, render
from glyphoxa_mcp.web.forms import Form, query_of
from glyphoxa_mcp.web.paging import MAX_PAGE, Paging, page_link
from glyphoxa_mcp.web.review_rows import review_columns, review_rows

MAX_BULK = 500


class ReviewPage(Form):
    page: int = Field(default=1, ge=1, le=MAX_PAGE)


class BulkReview(Form):
    items: list[Annotated[str, StringConstraints(max_length=40)]] = Field(
        min_length=1, max_length=MAX_BULK
    )
    action: Literal["confirm", "reject"]


class RelationshipEdit(Form):
    rel_type: Annotated[str, StringConstraints(min_length=1, max_length=64)]


class ImportEdit(Form):
    name: Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS)]
    type: EntityType
    aliases: Annotated[str, StringConstraints(max_length=4_000)] = ""


def review_url(campaign: str) -> str:
    return f"/c/{campaign}/review"


async def review_page(request: Request) -> Response:
    desk = await campaign_desk(request)
    page = query_of(request, ReviewPage)
    waiting = await review_actions.waiting_for_review(desk)
    rows = review_rows(waiting.queue, waiting.imports, await names_by_id(desk))
    paging = Paging(page.page, len(rows))
    shown = paging.of(rows)
    return render(
        request,
        "review.html",
        {
            "summaries": await summaries_to_review(desk),
            "size": await campaign_size(desk.db, desk.campaign_id),
            "rows": shown,
            "columns": review_columns(shown),
            "paging": paging,
            "page_url": lambda n: page_link(request.url.path, {}, n),
            "threshold": waiting.threshold,
            "entity_types": [t.value for t in EntityType],
        },
    )


async def review_many(request: Request) -> Response:
    desk = await campaign_desk(request)
    async with acting(request, review_url(desk.campaign_id)) as act:
        form = await act.form(BulkReview)
        items = [ReviewItem.parse(reference, "items") for reference in form.items]
        act_on = review_actions.confirm if form.action == "confirm" else review_actions.reject
        # All of them or none: a stale item (reviewed in another tab) leaves the rest as
        # they were, and the note names it.
        await act_on(desk, items)
        done = "Confirmed" if form.action == "confirm" else "Rejected (deleted)"
        act.done(f"{done} {len(items)}: {', '.join(i.reference for i in items)}.")
    return act.response


async def edit_relationship(request: Request) -> Response:
    desk = await campaign_desk(request)
    relationship_id = int(request.path_params["relationship_id"])
    async with acting(request, review_url(desk.campaign_id)) as act:
        form = await act.form(RelationshipEdit)
        rel_type = checked_relationship_type(form.rel_type, "rel_type")
        new = await review_actions.retype_relationship(desk, relationship_id, rel_type)
        act.done(f"rel:{relationship_id} is now rel:{new.id}, {new.rel_type}, confirmed.")
    return act.response


async def edit_import(request: Request) -> Response:
    desk = await campaign_desk(request)
    import_id = int(request.path_params["import_id"])
    async with acting(request, review_url(desk.campaign_id)) as act:
        form = await act.form(ImportEdit)
        aliases = tuple(a.strip() for a in form.aliases.split(",") if a.strip())
        edited = await review_actions.revise_import(
            desk, import_id, name=form.name, type=form.type, aliases=aliases
        )
        act.done(f"import:{import_id} now proposes {edited.name} ({edited.type.value}).")
    return act.response


ROUTES = [
    Route("/c/{campaign}/review", review_page, methods=["GET"]),
    Route("/c/{campaign}/review", review_many, methods=["POST"]),
    Route(
        "/c/{campaign}/relationships/{relationship_id:int}/type",
        edit_relationship,
        methods=["POST"],
    ),
    Route("/c/{campaign}/imports/{import_id:int}", edit_import, methods=["POST"]),
]
