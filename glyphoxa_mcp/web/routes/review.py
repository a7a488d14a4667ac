"""The review queue: rumours below the campaign's threshold, held imports and a session's
proposed entities; confirm or reject them one by one or many at once, or edit one."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from glyphoxa_mcp.domain.models import MAX_NAME_CHARS, NewEntity, build
from glyphoxa_mcp.domain.review_items import ReviewItem
from glyphoxa_mcp.domain.vocabulary import EntityType, checked_relationship_type
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.storage import review_queue
from glyphoxa_mcp.storage.deletion import campaign_size, summaries_to_review
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.web.desk import acting, campaign_memory, desk_of, render
from glyphoxa_mcp.web.forms import Form, query_of
from glyphoxa_mcp.web.paging import MAX_PAGE, Paging, page_link
from glyphoxa_mcp.web.review_rows import review_rows

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
    memory = await campaign_memory(request)
    page = query_of(request, ReviewPage)
    threshold = (await memory.campaign()).review_threshold
    queue = await memory.curation.review_queue(threshold)
    pending = await memory.pending.list()
    names = {e.id: e.name for e in await memory.known_entities()}
    rows = review_rows(queue, pending, names)
    paging = Paging(page.page, len(rows))
    return render(
        request,
        "review.html",
        {
            "summaries": await summaries_to_review(memory.db, memory.campaign_id),
            "size": await campaign_size(memory.db, memory.campaign_id),
            "rows": paging.of(rows),
            "paging": paging,
            "page_url": lambda n: page_link(request.url.path, {}, n),
            "threshold": threshold,
            "entity_types": [t.value for t in EntityType],
        },
    )


async def review_many(request: Request) -> Response:
    memory = await campaign_memory(request)
    async with acting(request, review_url(memory.campaign_id)) as act:
        form = await act.form(BulkReview)
        items = [ReviewItem.parse(reference, "items") for reference in form.items]
        act_on = review_queue.confirm if form.action == "confirm" else review_queue.reject
        # All of them or none: a stale item (reviewed in another tab) leaves the rest as
        # they were, and the note names it.
        async with memory.db.transaction() as tx:
            writing = CampaignMemory(tx, memory.campaign_id)
            for item in items:
                await act_on(writing, item)
        done = "Confirmed" if form.action == "confirm" else "Rejected (deleted)"
        act.done(f"{done} {len(items)}: {', '.join(i.reference for i in items)}.")
    return act.response


async def edit_relationship(request: Request) -> Response:
    memory = await campaign_memory(request)
    relationship_id = int(request.path_params["relationship_id"])
    async with acting(request, review_url(memory.campaign_id)) as act:
        form = await act.form(RelationshipEdit)
        rel_type = checked_relationship_type(form.rel_type, "rel_type")
        new = await review_queue.retype(memory, relationship_id, rel_type)
        await embed_new(memory.db, desk_of(request).app.embedder, memory.campaign_id)
        act.done(f"rel:{relationship_id} is now rel:{new.id}, {new.rel_type}, confirmed.")
    return act.response


async def edit_import(request: Request) -> Response:
    memory = await campaign_memory(request)
    import_id = int(request.path_params["import_id"])
    async with acting(request, review_url(memory.campaign_id)) as act:
        form = await act.form(ImportEdit)
        held = {p.id: p for p in await memory.pending.list()}.get(import_id)
        if held is None:
            raise NotFoundError(f"import:{import_id} no longer waits for review.")
        aliases = tuple(a.strip() for a in form.aliases.split(",") if a.strip())
        edited = build(
            NewEntity,
            id=held.entity.id,
            type=form.type,
            name=form.name,
            aliases=aliases,
            attributes=held.entity.attributes,
            visibility=held.entity.visibility,
        )
        await memory.pending.revise(import_id, edited)
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
