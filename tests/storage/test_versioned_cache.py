from __future__ import annotations

from collections.abc import Awaitable, Callable

from glyphoxa_mcp.db.database import Database, DatabaseLocation
from glyphoxa_mcp.domain.models import NewEntity, NewFact, NewRelationship, Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.storage.memory import CampaignMemory


def counter() -> tuple[list[int], Callable[[], Awaitable[int]]]:
    calls: list[int] = []

    async def compute() -> int:
        calls.append(len(calls))
        return len(calls)

    return calls, compute


async def test_a_value_is_computed_once_while_no_entity_changes(memory: CampaignMemory) -> None:
    calls, compute = counter()
    cache = memory.entity_cache
    assert await cache.get("k", compute) == 1
    assert await cache.get("k", compute) == 1
    await memory.sessions.list()  # other tables do not count
    assert await cache.get("k", compute) == 1 and calls == [0]


async def test_every_kind_of_entity_change_moves_the_version(memory: CampaignMemory) -> None:
    cache = memory.entity_cache
    versions = [await cache.version()]
    await memory.graph.upsert_entity(NewEntity(id="mira", type=EntityType.NPC, name="Mira"))
    versions.append(await cache.version())
    await memory.graph.upsert_entity(
        NewEntity(id="mira", type=EntityType.NPC, name="Mira", visibility=Visibility(secret=True))
    )
    versions.append(await cache.version())
    await memory.graph.delete_entity("mira")
    versions.append(await cache.version())
    assert versions == sorted(set(versions)) and len(versions) == 4


async def test_a_change_by_another_connection_is_seen_at_the_next_lookup(
    db: Database, memory: CampaignMemory, other_campaign: CampaignMemory
) -> None:
    _, compute = counter()
    assert await memory.entity_cache.get("k", compute) == 1
    # Another campaign's entities are not this campaign's.
    await other_campaign.graph.upsert_entity(NewEntity(type=EntityType.NPC, name="Olaf"))
    assert await memory.entity_cache.get("k", compute) == 1
    async with await Database.open_dsn(
        DatabaseLocation(db.location.dsn, "another pool"), db.embedding_dim, max_size=1
    ) as elsewhere:
        other = CampaignMemory(elsewhere, memory.campaign_id)
        await other.graph.upsert_entity(NewEntity(type=EntityType.NPC, name="Mira"))
    assert await memory.entity_cache.get("k", compute) == 2


async def test_the_least_recently_used_values_are_dropped_beyond_capacity(
    memory: CampaignMemory,
) -> None:
    cache = memory.entity_cache
    cache.capacity = 2
    calls, compute = counter()
    await cache.get("a", compute)
    await cache.get("b", compute)
    await cache.get("a", compute)
    await cache.get("c", compute)  # evicts b
    await cache.get("a", compute)
    assert len(calls) == 3
    await cache.get("b", compute)
    assert len(calls) == 4


async def test_deleting_a_campaign_with_entities_still_works(
    memory: CampaignMemory, db: Database
) -> None:
    from glyphoxa_mcp.storage.campaigns import Campaigns

    await memory.graph.upsert_entity(NewEntity(type=EntityType.NPC, name="Mira"))
    assert await Campaigns(db).delete(memory.campaign_id)


async def test_every_change_to_what_an_npc_knows_moves_the_knowledge_version(
    memory: CampaignMemory,
) -> None:
    graph, knowledge, entities = memory.graph, memory.knowledge_cache, memory.entity_cache
    await graph.upsert_entity(NewEntity(id="mira", type=EntityType.NPC, name="Mira"))
    await graph.upsert_entity(NewEntity(id="kettle", type=EntityType.LOCATION, name="Kettle"))
    entity_version = await entities.version()
    versions = [await knowledge.version()]
    relationship = NewRelationship(source_id="mira", target_id="kettle", rel_type="LOCATED_AT")
    await graph.upsert_relationship(relationship)
    versions.append(await knowledge.version())
    await graph.upsert_relationship(
        relationship.model_copy(update={"visibility": Visibility(secret=True)})
    )
    versions.append(await knowledge.version())
    await graph.delete_relationship("mira", "LOCATED_AT", "kettle")
    versions.append(await knowledge.version())
    fact = await graph.upsert_fact(NewFact(subject_id="mira", text="Mira sings."))
    versions.append(await knowledge.version())
    await graph.upsert_fact(
        NewFact(subject_id="mira", text="Mira sings.", visibility=Visibility(secret=True))
    )
    versions.append(await knowledge.version())
    await graph.delete_fact(fact.id)
    versions.append(await knowledge.version())
    # Relationships and facts leave what depends on the entities alone in place.
    assert await entities.version() == entity_version
    await graph.upsert_entity(NewEntity(id="mira", type=EntityType.NPC, name="Mira Vell"))
    versions.append(await knowledge.version())
    assert versions == sorted(set(versions)) and len(versions) == 8


async def test_callers_at_once_share_one_computation(memory: CampaignMemory) -> None:
    import anyio

    started, release = anyio.Event(), anyio.Event()
    calls: list[int] = []

    async def slow() -> int:
        calls.append(1)
        started.set()
        await release.wait()
        return 42

    results: list[int] = []

    async def ask() -> None:
        results.append(await memory.entity_cache.get("shared", slow))

    async with anyio.create_task_group() as tasks:
        for _ in range(5):
            tasks.start_soon(ask)
        await started.wait()
        await anyio.sleep(0.05)  # the other four are waiting on the first by now
        release.set()
    assert results == [42] * 5 and calls == [1]


async def test_a_failed_computation_fails_its_waiters_and_is_not_kept(
    memory: CampaignMemory,
) -> None:
    import anyio
    import pytest

    async def broken() -> int:
        await anyio.sleep(0.02)
        raise ValueError("no")

    async def ask() -> None:
        with pytest.raises(ValueError, match="no"):
            await memory.entity_cache.get("broken", broken)

    async with anyio.create_task_group() as tasks:
        for _ in range(3):
            tasks.start_soon(ask)
    calls, compute = counter()
    assert await memory.entity_cache.get("broken", compute) == 1 and calls == [0]
