"""Entities and relationships: listing and reading them, adding, editing and removing an
entity, relating two. What the DM states is the DM's: confirmed at full confidence, a rumour
below it."""

from __future__ import annotations

from dataclasses import dataclass

from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.listings import EntityPage
from glyphoxa_mcp.domain.models import (
    Entity,
    IdentitySnapshot,
    NewEntity,
    NewRelationship,
    Relationship,
    Visibility,
    build,
)
from glyphoxa_mcp.domain.rumours import dm_statement
from glyphoxa_mcp.domain.vocabulary import EntityType, slugify
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.storage.entity_pages import EntityPages

MAX_ENTITIES = 100_000


@dataclass(frozen=True)
class EntityDetails:
    entity: Entity
    snapshot: IdentitySnapshot
    """Its relationships and current facts."""


async def list_entities(
    desk: CampaignDesk,
    type: EntityType | None = None,
    *,
    name: str | None = None,
    limit: int = MAX_ENTITIES,
) -> list[Entity]:
    """The entities (of one type, or holding `name` in a name or alias), by name."""
    return await desk.memory.graph.find_entities(name=name, type=type, limit=limit)


async def entity_page(
    desk: CampaignDesk,
    *,
    offset: int,
    limit: int,
    holding: str | None = None,
    type: EntityType | None = None,
) -> EntityPage:
    """A page of the entities in reading order, with how many match in all."""
    return await EntityPages(desk.db, desk.campaign_id).page(
        offset=offset, limit=limit, holding=holding, type=type
    )


async def entity_details(desk: CampaignDesk, entity_id: str) -> EntityDetails:
    entity = await desk.memory.graph.get_entity(entity_id)
    return EntityDetails(entity, await desk.memory.queries.identity_snapshot(entity.id))


async def add_entity(desk: CampaignDesk, new: NewEntity) -> Entity:
    """A new entity; an id taken already is refused (edit that entity instead)."""
    wanted = new.id or slugify(new.name)
    try:
        await desk.memory.graph.get_entity(wanted)
    except NotFoundError:
        return await desk.memory.graph.upsert_entity(new)
    raise InvalidInputError(
        f"An entity with id {wanted!r} exists already; edit it, or give --id.", field="id"
    )


async def edit_entity(desk: CampaignDesk, entity: Entity, edited: NewEntity) -> Entity:
    """`entity` becomes `edited` (its id kept); renamed, its relationships are embedded
    again, as they read differently now."""
    stored = await desk.memory.graph.upsert_entity(edited)
    if stored.name != entity.name:
        await embed_new(desk.db, await desk.write_embedder(), desk.campaign_id)
    return stored


async def remove_entity(desk: CampaignDesk, entity_id: str) -> None:
    """The entity with its relationships and facts."""
    await desk.memory.graph.delete_entity(entity_id)


async def relate(
    desk: CampaignDesk,
    source_id: str,
    rel_type: str,
    target_id: str,
    *,
    confidence: float = 1.0,
    visibility: Visibility | None = None,
) -> Relationship:
    """The DM's relationship (`rel_type` checked already), stored, then embedded."""
    stored = await desk.memory.graph.upsert_relationship(
        build(
            NewRelationship,
            source_id=source_id,
            target_id=target_id,
            rel_type=rel_type,
            provenance=dm_statement(confidence),
            visibility=visibility or Visibility(),
        )
    )
    await embed_new(desk.db, await desk.write_embedder(), desk.campaign_id)
    return stored
