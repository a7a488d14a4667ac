"""Storing a fact's or relationship's vector is not a change to what an NPC knows: it moves
no knowledge counter and tells no subscriber, while an edit of the same rows still does."""

from __future__ import annotations

import anyio

from glyphoxa_mcp.db.change_feed import Change, listening
from glyphoxa_mcp.domain.models import NewEntity, NewFact, NewRelationship
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.storage.fact_vectors import FactVectors, RelationshipVectors
from glyphoxa_mcp.storage.memory import CampaignMemory


async def test_vectors_stored_move_no_version_and_notify_no_one(
    memory: CampaignMemory, db_dsn: str
) -> None:
    graph = memory.graph
    await graph.upsert_entity(NewEntity(id="mira", type=EntityType.NPC, name="Mira"))
    await graph.upsert_entity(NewEntity(id="kettle", type=EntityType.LOCATION, name="Kettle"))
    await graph.upsert_relationship(
        NewRelationship(source_id="mira", target_id="kettle", rel_type="LOCATED_AT")
    )
    await graph.upsert_fact(NewFact(subject_id="mira", text="Mira sings."))
    facts = FactVectors(memory.db, memory.campaign_id)
    relationships = RelationshipVectors(memory.db, memory.campaign_id)
    heard: list[Change] = []
    edited = anyio.Event()

    async def record(change: Change) -> None:
        heard.append(change)
        edited.set()

    before = await memory.knowledge_cache.version()
    async with listening(db_dsn, record):
        await facts.store([(fact, [1.0, 0.0, 0.0, 0.0]) for fact in await facts.missing(limit=9)])
        await relationships.store(
            [(rel, [0.0, 1.0, 0.0, 0.0]) for rel in await relationships.missing(limit=9)]
        )
        assert await facts.count_missing() == 0 and await relationships.count_missing() == 0
        assert await memory.knowledge_cache.version() == before
        # Notifications arrive in commit order: one for the vectors would come first.
        await graph.upsert_fact(NewFact(subject_id="mira", text="Mira sings.", story_day=3))
        with anyio.fail_after(10):
            await edited.wait()
    assert [(c.kind, c.table) for c in heard] == [("graph", "facts")]
    assert await memory.knowledge_cache.version() > before
