"""What waits for the DM's review, item by item: rumours (`rel:ID`, `fact:ID`) and entities
held back from the graph (`import:ID`: a VTT import or a session's proposal), and what
confirming or rejecting one does. `review confirm|reject` and the DM's desk both act here."""

from __future__ import annotations

from glyphoxa_mcp.domain.models import NewRelationship, Provenance, Relationship, build
from glyphoxa_mcp.domain.review_items import ReviewItem
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.storage.memory import CampaignMemory


async def confirm(memory: CampaignMemory, item: ReviewItem) -> None:
    """A rumour becomes fact (the DM confirmed it); a held entity is written to the graph."""
    if item.kind == "import":
        pending = await memory.pending.take(item.id)
        await memory.graph.upsert_entity(pending.entity)
    else:
        await memory.curation.confirm(item.kind, item.id)


async def reject(memory: CampaignMemory, item: ReviewItem) -> None:
    """A rumour is deleted; a held entity is dropped."""
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


async def retype(memory: CampaignMemory, relationship_id: int, rel_type: str) -> Relationship:
    """The DM's correction of a relationship's type: it is stored under the new type as the
    DM's own statement (confirmed), and the old one is deleted, in one transaction."""
    async with memory.db.transaction() as tx:
        graph = CampaignMemory(tx, memory.campaign_id).graph
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
        return await graph.upsert_relationship(new)
