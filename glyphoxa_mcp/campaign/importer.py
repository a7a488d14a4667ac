"""Bringing imported entities in: compared with the graph, then written or held for review."""

from __future__ import annotations

from typing import Literal

from glyphoxa_mcp.campaign.vtt.common import ImportResult
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import Entity, NewEntity
from glyphoxa_mcp.domain.reports import ImportedEntity, ImportReport
from glyphoxa_mcp.domain.review_items import PendingSource
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory

MAX_ENTITIES = 100_000


def _same(before: Entity, after: NewEntity) -> bool:
    return (before.type, before.name, before.aliases, before.attributes) == (
        after.type,
        after.name,
        after.aliases,
        after.attributes,
    )


async def import_entities(
    db: Database, campaign_id: str, source: PendingSource, result: ImportResult, *, accept: bool
) -> ImportReport:
    """With `accept`, write every new or changed entity (all or nothing); otherwise hold them
    for `review confirm import:ID`. An existing entity keeps the visibility the DM gave it."""
    imported = []
    async with db.transaction() as tx:
        await Campaigns(tx).ensure(campaign_id)
        memory = CampaignMemory(tx, campaign_id)
        stored = {e.id: e for e in await memory.graph.find_entities(limit=MAX_ENTITIES)}
        for item in result.entities:
            entity = item.entity
            assert entity.id is not None
            before = stored.get(entity.id)
            if before is not None:
                entity = entity.model_copy(update={"visibility": before.visibility})
                if _same(before, entity):
                    imported.append(
                        ImportedEntity(entity.name, entity.type.value, "unchanged", None)
                    )
                    continue
            action: Literal["created", "updated"] = "created" if before is None else "updated"
            pending = None
            if accept:
                await memory.graph.upsert_entity(entity)
            else:
                pending = await memory.pending.propose(source, item.source_ref, entity)
            imported.append(ImportedEntity(entity.name, entity.type.value, action, pending))
    return ImportReport(campaign_id, accept, tuple(imported), tuple(result.notes))
