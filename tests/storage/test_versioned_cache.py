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


async def test_sessions_move_the_knowledge_version_when_who_may_read_them_changes(
    memory: CampaignMemory,
) -> None:
    from datetime import UTC, datetime

    from glyphoxa_mcp.domain.models import NewSession
    from glyphoxa_mcp.storage.deletion import delete_session

    knowledge = memory.knowledge_cache
    versions = [await knowledge.version()]
    await memory.sessions.upsert(NewSession(id="s2", title="The well"))
    versions.append(await knowledge.version())
    await memory.sessions.set_dm_only("s2", True)
    versions.append(await knowledge.version())
    await memory.sessions.set_dm_only("s2", False)
    versions.append(await knowledge.version())
    assert versions == sorted(set(versions)) and len(versions) == 4
    # What changes no one's reach leaves the counter where it is.
    await memory.sessions.set_dm_only("s2", False)
    await memory.sessions.end("s2", datetime.now(UTC))
    assert await knowledge.version() == versions[-1]
    await delete_session(memory.db, memory.campaign_id, "s2")
    assert await knowledge.version() > versions[-1]


async def test_both_counters_are_read_in_one_statement(memory: CampaignMemory) -> None:
    versions = await memory.versions()
    assert versions.entities == await memory.entity_cache.version()
    assert versions.knowledge == await memory.knowledge_cache.version()
    await memory.graph.upsert_entity(NewEntity(id="mira", type=EntityType.NPC, name="Mira"))
    moved = await memory.versions()
    assert moved.entities > versions.entities and moved.knowledge > versions.knowledge


async def test_missing_values_are_computed_together_and_kept(memory: CampaignMemory) -> None:
    cache = memory.knowledge_parts
    batches: list[list[str]] = []

    async def compute(keys: list[str]) -> dict[str, str]:
        batches.append(keys)
        return {key: key.upper() for key in keys}

    version = await cache.version()
    assert await cache.get_many(["a", "b"], compute, version) == {"a": "A", "b": "B"}
    assert await cache.get_many(["b", "c", "a"], compute, version) == {
        "a": "A",
        "b": "B",
        "c": "C",
    }
    assert batches == [["a", "b"], ["c"]]
    await memory.graph.upsert_entity(NewEntity(id="mira", type=EntityType.NPC, name="Mira"))
    newer = await cache.version()
    assert await cache.get_many(["a"], compute, newer) == {"a": "A"}
    assert batches[-1] == ["a"]


async def test_a_caller_behind_a_change_never_drops_what_is_newer(memory: CampaignMemory) -> None:
    cache = memory.knowledge_cache
    older = await cache.version()
    await memory.graph.upsert_entity(NewEntity(id="mira", type=EntityType.NPC, name="Mira"))
    newer = await cache.version()
    calls, compute = counter()
    assert await cache.get("k", compute, newer) == 1
    # A call that read the counter before the change gets the newer value, never wrong,
    # and leaves it kept for the calls that read the counter after.
    assert await cache.get("k", compute, older) == 1
    assert await cache.get("other", compute, older) == 2
    assert await cache.get("k", compute, newer) == 1 and len(calls) == 2
    assert await cache.get("other", compute, newer) == 3


async def test_a_lookup_behind_a_change_shares_what_is_read_afresh(
    memory: CampaignMemory,
) -> None:
    """A value `update` makes is read afresh whoever asks: a lookup behind a change works
    at the current version and keeps what it makes, as the scopes are."""
    cache = memory.entity_cache
    older = await cache.version()
    await memory.graph.upsert_entity(NewEntity(id="mira", type=EntityType.NPC, name="Mira"))
    newer = await cache.version()
    calls, compute = counter()

    async def update(previous: int) -> int:
        return previous + 100

    assert await cache.get_updated("k", compute, update, newer) == 1
    assert await cache.get_updated("j", compute, update, older) == 2
    assert await cache.get_updated("j", compute, update, newer) == 2 and len(calls) == 2


async def test_counters_that_went_back_trust_nothing_kept(memory: CampaignMemory) -> None:
    """The database restored under a running server: its counters are older than what is
    kept, and what is kept may be newer than the data."""
    cache = memory.knowledge_parts
    calls, compute = counter()
    assert await cache.get("k", compute) == 1
    async with memory.db.pool.acquire() as conn:
        await conn.execute(
            "UPDATE knowledge_versions SET version = version - 1000 WHERE campaign_id = $1",
            memory.campaign_id,
        )
    assert await cache.get("k", compute) == 2
    assert await cache.get("k", compute) == 2 and len(calls) == 2
