"""The entity change log (sql/025) and what is patched from it: a campaign's entity names
read once and then only what changed, and values of the versioned cache updated instead of
computed again."""

from __future__ import annotations

from glyphoxa_mcp.domain.entity_names import EntityNames
from glyphoxa_mcp.domain.models import NewEntity, Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.storage.memory import CampaignMemory


def npc(entity_id: str, name: str, **more: object) -> NewEntity:
    return NewEntity.model_validate({"id": entity_id, "type": EntityType.NPC, "name": name} | more)


async def test_the_log_names_what_changed_since_a_version(memory: CampaignMemory) -> None:
    await memory.graph.upsert_entity(npc("vask", "Vask"))
    await memory.graph.upsert_entity(npc("oriel", "Oriel"))
    since = await memory.entity_cache.version()
    await memory.graph.upsert_entity(npc("vask", "Oriel Vask", aliases=["the Captain"]))
    await memory.graph.delete_entity("oriel")
    changes = await memory.queries.entity_changes(since)
    assert changes.complete
    assert changes.version == since + 2
    assert changes.changed_ids == {"vask", "oriel"}
    assert [(e.id, e.name, e.aliases) for e in changes.entities] == [
        ("vask", "Oriel Vask", ("the Captain",))
    ]
    nothing = await memory.queries.entity_changes(changes.version)
    assert nothing.complete and not nothing.changed_ids and nothing.version == changes.version


async def test_an_id_changed_by_an_update_is_logged_as_gone(memory: CampaignMemory) -> None:
    await memory.graph.upsert_entity(npc("vask", "Vask"))
    since = await memory.entity_cache.version()
    await memory.db.pool.execute(
        "UPDATE entities SET id = 'vask-2' WHERE campaign_id = $1 AND id = 'vask'",
        memory.campaign_id,
    )
    changes = await memory.queries.entity_changes(since)
    assert changes.changed_ids == {"vask", "vask-2"}
    assert [e.id for e in changes.entities] == ["vask-2"]


async def test_a_log_that_no_longer_reaches_back_is_incomplete(memory: CampaignMemory) -> None:
    await memory.graph.upsert_entity(npc("vask", "Vask"))
    await memory.db.pool.execute(
        "DELETE FROM entity_changes WHERE campaign_id = $1", memory.campaign_id
    )
    await memory.graph.upsert_entity(npc("oriel", "Oriel"))
    assert not (await memory.queries.entity_changes(0)).complete


async def test_known_entities_are_patched_not_read_again(memory: CampaignMemory) -> None:
    await memory.graph.upsert_entity(npc("vask", "Vask"))
    await memory.graph.upsert_entity(npc("brannoch", "Brannoch"))
    first = await memory.entity_names()
    assert await memory.known_entities() is first.entities, "the same list while unchanged"
    reads = []
    original = memory.queries.entity_names

    async def counted(npc_id: str | None = None) -> list:  # type: ignore[type-arg]
        reads.append(npc_id)
        return await original(npc_id)

    memory.queries.entity_names = counted  # type: ignore[method-assign]
    await memory.db.pool.execute(
        "UPDATE entities SET updated_at = now() WHERE campaign_id = $1", memory.campaign_id
    )
    touched = await memory.entity_names()
    assert touched.entities is first.entities, "a touch changes no name"
    await memory.graph.upsert_entity(npc("ash", "Ash", visibility=Visibility(secret=True)))
    await memory.graph.upsert_entity(npc("vask", "Oriel Vask"))
    patched = await memory.entity_names()
    assert not reads, "only the changes were read"
    assert [(e.id, e.name) for e in patched.entities] == [
        ("ash", "Ash"),
        ("brannoch", "Brannoch"),
        ("vask", "Oriel Vask"),
    ]
    assert patched.entities == await original()
    assert patched.changed_since(first.version) == {"ash", "brannoch", "vask"}  # touched too
    assert patched.changed_since(first.version - 1) is None


def test_a_snapshot_remembers_which_ids_changed_since_each_step() -> None:
    empty = EntityNames.read(3, [])
    assert empty.changed_since(3) == frozenset()
    assert empty.changed_since(2) is None
