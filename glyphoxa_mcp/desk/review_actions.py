"""The review queue: what waits for the DM (rumours below the campaign's threshold, entities
held from an import or proposed by a session), confirming or rejecting items (several at
once: all of them or none), and correcting one before confirming it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.models import NewEntity, NewRelationship, Provenance, Relationship, build
from glyphoxa_mcp.domain.review_items import PendingEntity, ReviewItem, ReviewQueue
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.storage.memory import CampaignMemory


@dataclass(frozen=True)
class WaitingForReview:
    threshold: float
    """The confidence below which unconfirmed knowledge is listed."""
    queue: ReviewQueue
    imports: list[PendingEntity]
    """Entities held back from the graph: a VTT import's, or a session's proposals."""


async def waiting_for_review(
    desk: CampaignDesk, threshold: float | None = None
) -> WaitingForReview:
    """What waits below `threshold` (None: the campaign's review threshold)."""
    if threshold is None:
        threshold = (await desk.memory.campaign()).review_threshold
    queue = await desk.memory.curation.review_queue(threshold)
    return WaitingForReview(threshold, queue, await desk.memory.pending.list())


async def confirm(desk: CampaignDesk, items: Sequence[ReviewItem]) -> None:
    """A rumour becomes fact (the DM confirmed it); a held entity is written to the graph.
    All of them or none: an item gone (reviewed elsewhere) leaves the rest as they were."""
    async with desk.db.transaction() as tx:
        memory = CampaignMemory(tx, desk.campaign_id)
        for item in items:
            await _confirm(memory, item)


async def reject(desk: CampaignDesk, items: Sequence[ReviewItem]) -> None:
    """A rumour is deleted; a held entity is dropped. All of them or none."""
    async with desk.db.transaction() as tx:
        memory = CampaignMemory(tx, desk.campaign_id)
        for item in items:
            await _reject(memory, item)


async def _confirm(memory: CampaignMemory, item: ReviewItem) -> None:
    if item.kind == "import":
        pending = await memory.pending.take(item.id)
        await memory.graph.upsert_entity(pending.entity)
    else:
        await memory.curation.confirm(item.kind, item.id)


async def _reject(memory: CampaignMemory, item: ReviewItem) -> None:
    if item.kind == "import":
        await memory.pending.take(item.id)
        return
    if item.kind == "fact":
        deleted = await memory.graph.delete_fact(item.id)
    else:
        relationship = await memory.graph.get_relationship(item.id)
        deleted = await memory.graph.delete_relationship(
            relationship.source_id, relationship.rel_type, relationship.target_id
        )
    if not deleted:
        raise NotFoundError(f"No {item.reference} in campaign {memory.campaign_id!r}.")


async def retype_relationship(
    desk: CampaignDesk, relationship_id: int, rel_type: str
) -> Relationship:
    """The DM's correction of a relationship's type (`rel_type` checked already): it is
    stored under the new type as the DM's own statement (confirmed), and the old one is
    deleted, in one transaction; then embedded."""
    async with desk.db.transaction() as tx:
        graph = CampaignMemory(tx, desk.campaign_id).graph
        old = await graph.get_relationship(relationship_id)
        new = build(
            NewRelationship,
            source_id=old.source_id,
            target_id=old.target_id,
            rel_type=rel_type,
            attributes=old.attributes,
            provenance=Provenance(
                session_id=old.provenance.session_id,
                entry_id=old.provenance.entry_id,
                confidence=1.0,
                source="dm",
                dm_confirmed=True,
            ),
            visibility=old.visibility,
        )
        await graph.delete_relationship(old.source_id, old.rel_type, old.target_id)
        stored = await graph.upsert_relationship(new)
    await embed_new(desk.db, await desk.write_embedder(), desk.campaign_id)
    return stored


async def revise_import(
    desk: CampaignDesk,
    import_id: int,
    *,
    name: str,
    type: EntityType,
    aliases: tuple[str, ...] = (),
) -> NewEntity:
    """The DM's edit of a held entity, still waiting for review: its name, type and aliases
    (its id, attributes and visibility kept)."""
    held = {p.id: p for p in await desk.memory.pending.list()}.get(import_id)
    if held is None:
        raise NotFoundError(f"import:{import_id} no longer waits for review.")
    edited = build(
        NewEntity,
        id=held.entity.id,
        type=type,
        name=name,
        aliases=aliases,
        attributes=held.entity.attributes,
        visibility=held.entity.visibility,
    )
    await desk.memory.pending.revise(import_id, edited)
    return edited
