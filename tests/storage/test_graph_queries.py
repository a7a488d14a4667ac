from __future__ import annotations

import pytest

from glyphoxa_mcp.domain.models import NewChunk
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.graph_queries import MAX_DEPTH
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.semantic_index import content_hash
from tests.storage.graph_fixtures import build_village


async def test_neighbours_at_depth_one_and_two(memory: CampaignMemory) -> None:
    await build_village(memory)
    one = await memory.queries.neighbours("grimjaw", depth=1)
    assert {n.entity.id for n in one} == {"smiths-guild", "red-kettle", "mira", "ember-blade"}
    two = await memory.queries.neighbours("grimjaw", depth=2)
    watch = next(n for n in two if n.entity.id == "town-watch")
    assert watch.depth == 2 and watch.path == ("grimjaw", "smiths-guild", "town-watch")
    assert watch.via == "ALLIED_WITH"
    assert [n.depth for n in two] == sorted(n.depth for n in two)


async def test_traversal_is_cycle_safe_and_lists_each_entity_once(memory: CampaignMemory) -> None:
    await build_village(memory)
    walked = await memory.queries.neighbours("mira", depth=MAX_DEPTH)
    ids = [n.entity.id for n in walked]
    assert len(ids) == len(set(ids)) and "mira" not in ids
    assert next(n for n in walked if n.entity.id == "grimjaw").depth == 1


async def test_depth_is_capped(memory: CampaignMemory) -> None:
    await build_village(memory)
    for depth in (0, MAX_DEPTH + 1):
        with pytest.raises(InvalidInputError, match="depth"):
            await memory.queries.neighbours("grimjaw", depth=depth)


async def test_outgoing_traversal_and_type_filter(memory: CampaignMemory) -> None:
    await build_village(memory)
    outgoing = await memory.queries.neighbours("smiths-guild", direction="outgoing")
    assert {n.entity.id for n in outgoing} == {"town-watch"}
    members = await memory.queries.neighbours("smiths-guild", rel_types=["MEMBER_OF"])
    assert {n.entity.id for n in members} == {"grimjaw"}


async def test_traversal_never_crosses_what_the_npc_may_not_know(memory: CampaignMemory) -> None:
    await build_village(memory)
    as_mira = await memory.queries.neighbours("grimjaw", depth=3, npc_id="mira")
    assert "ember-blade" not in {n.entity.id for n in as_mira}
    as_mira_from_vask = await memory.queries.neighbours("vask", depth=3, npc_id="mira")
    assert as_mira_from_vask == []
    as_vask = await memory.queries.neighbours("vask", npc_id="vask")
    assert [n.entity.id for n in as_vask] == ["cult"]


async def test_visible_subgraph_excludes_secrets(memory: CampaignMemory) -> None:
    await build_village(memory)
    mira = await memory.queries.visible_subgraph("mira")
    assert "cult" not in {e.id for e in mira.entities}
    assert all(r.rel_type != "OWNS" and r.target_id != "cult" for r in mira.relationships)
    assert all("Ember" not in f.text and "cult" not in f.text for f in mira.facts)
    vask = await memory.queries.visible_subgraph("vask")
    assert "cult" in {e.id for e in vask.entities}
    assert any(f.text.startswith("The cult") for f in vask.facts)


async def test_identity_snapshot_holds_what_the_npc_knows_of_itself(memory: CampaignMemory) -> None:
    await build_village(memory)
    snapshot = await memory.queries.identity_snapshot("grimjaw", npc_id="grimjaw")
    assert snapshot.entity.attributes["occupation"] == "blacksmith"
    related = {(r.relationship.rel_type, r.other.id, r.direction) for r in snapshot.relationships}
    assert related == {
        ("KNOWS", "mira", "outgoing"),
        ("KNOWS", "mira", "incoming"),
        ("LOCATED_AT", "red-kettle", "outgoing"),
        ("MEMBER_OF", "smiths-guild", "outgoing"),
    }
    assert [f.text for f in snapshot.facts] == [
        "Grimjaw forged the town gate's hinges.",
        "Grimjaw once served in the Town Watch.",
    ]
    dm_view = await memory.queries.identity_snapshot("grimjaw")
    assert ("OWNS", "ember-blade") in {
        (r.relationship.rel_type, r.other.id) for r in dm_view.relationships
    }
    assert len(dm_view.facts) == 3


async def test_a_secret_npc_is_hidden_from_others_but_knows_itself(memory: CampaignMemory) -> None:
    await build_village(memory)
    with pytest.raises(NotFoundError):
        await memory.queries.identity_snapshot("cult", npc_id="mira")
    cult = await memory.queries.identity_snapshot("cult", npc_id="vask")
    assert [r.other.id for r in cult.relationships] == ["vask"]


async def test_graphrag_ranks_chunks_of_the_neighbourhood_by_similarity(
    memory: CampaignMemory,
) -> None:
    await build_village(memory)
    await memory.index.upsert(
        [
            NewChunk(
                session_id="s1",
                content="Grimjaw hammers at the forge",
                embedding=[1, 0, 0, 0],
                entity_ids=("grimjaw",),
            ),
            NewChunk(
                session_id="s1",
                content="The watch closes the bridge",
                embedding=[0.7, 0.7, 0, 0],
                entity_ids=("town-watch",),
            ),
            NewChunk(session_id="s1", content="Unrelated tavern song", embedding=[0.9, 0.1, 0, 0]),
            NewChunk(
                session_id="s1",
                content="Cult whispers",
                embedding=[0.8, 0.2, 0, 0],
                entity_ids=("cult",),
            ),
        ]
    )
    near = await memory.queries.chunks_near_entities(["grimjaw"], [0.6, 0.8, 0, 0], depth=2)
    assert [c.match.chunk.content for c in near] == [
        "The watch closes the bridge",
        "Grimjaw hammers at the forge",
    ]
    assert near[0].linked_entity_ids == ("town-watch",) and near[0].graph_distance == 2
    shallow = await memory.queries.chunks_near_entities(["grimjaw"], [0.6, 0.8, 0, 0], depth=1)
    assert [c.match.chunk.content for c in shallow] == ["Grimjaw hammers at the forge"]


async def test_graphrag_over_facts_ranks_text_matches_by_graph_distance(
    memory: CampaignMemory,
) -> None:
    await build_village(memory)
    found = await memory.queries.facts_near_entities(["grimjaw"], "town watch", depth=2)
    by_text = {f.fact.text: f for f in found}
    # Both words, on the anchor itself, ranks first; the watch's own fact is two hops away.
    assert found[0].fact.text == "Grimjaw once served in the Town Watch."
    assert by_text["The Town Watch patrols the bridge at night."].graph_distance == 2
    assert [f.score for f in found] == sorted((f.score for f in found), reverse=True)
    one_hop = await memory.queries.facts_near_entities(["grimjaw"], "patrols bridge", depth=1)
    assert one_hop == []
    secret = await memory.queries.facts_near_entities(
        ["grimjaw"], "ember blade anvil", npc_id="mira"
    )
    assert secret == []


async def test_snapshots_keep_the_order_asked_and_skip_what_is_hidden(
    memory: CampaignMemory,
) -> None:
    await build_village(memory)
    found = await memory.queries.snapshots(["red-kettle", "cult", "grimjaw"], npc_id="mira")
    assert [s.entity.id for s in found] == ["red-kettle", "grimjaw"]
    lean = await memory.queries.snapshots(["grimjaw"], include_facts=False, max_relationships=2)
    assert lean[0].facts == () and len(lean[0].relationships) == 2


async def test_entity_names_cover_exactly_the_npcs_scope(memory: CampaignMemory) -> None:
    await build_village(memory)
    mira = {e.id for e in await memory.queries.entity_names("mira")}
    assert "cult" not in mira and "grimjaw" in mira
    assert "cult" in {e.id for e in await memory.queries.entity_names("vask")}
    assert len(await memory.queries.entity_names()) == 8


async def test_session_entities_come_from_every_layer(memory: CampaignMemory) -> None:
    from datetime import UTC, datetime

    from glyphoxa_mcp.domain.models import NewEntry, NewFact
    from glyphoxa_mcp.domain.scenes import Scene

    await build_village(memory)
    # Mira was there (the campaign is witnessed): she knows who spoke and what was tagged.
    await memory.scenes.record(
        [Scene(session_id="s1", started_at=datetime(2025, 12, 31, tzinfo=UTC), present=("mira",))]
    )
    await memory.log.append(
        "s1",
        NewEntry(
            speaker_id="gm",
            speaker_name="Grimjaw",
            text="Hm.",
            npc_id="grimjaw",
            spoken_at=datetime(2026, 1, 1, tzinfo=UTC),
        ),
    )
    await memory.index.upsert(
        [
            NewChunk(
                session_id="s1",
                content="At the kettle",
                embedding=[1, 0, 0, 0],
                entity_ids=("red-kettle",),
            )
        ]
    )
    await memory.index.tally_session_entities("s1")
    await memory.graph.upsert_fact(
        NewFact(subject_id="mira", text="Mira arrived.", session_id="s1")
    )
    # grimjaw OWNS ember-blade is sourced from s1 but secret from Mira.
    as_dm = {e.id for e in await memory.queries.session_entities("s1")}
    assert as_dm == {"grimjaw", "red-kettle", "mira", "ember-blade"}
    as_mira = {e.id for e in await memory.queries.session_entities("s1", npc_id="mira")}
    assert as_mira == {"grimjaw", "red-kettle", "mira"}
    # Had she not been, only what she knows of the session otherwise: the fact about her.
    await memory.db.pool.execute("DELETE FROM scenes WHERE campaign_id = $1", memory.campaign_id)
    absent = {e.id for e in await memory.queries.session_entities("s1", npc_id="mira")}
    assert absent == {"mira"}


async def test_session_entities_follow_the_passages_once_counted(
    memory: CampaignMemory,
) -> None:
    """The passages' entities are counted per session (by `process`, when it has stored
    them): storing a passage again, removing one of two that tag an entity, and removing
    the last one are all seen once counted again."""
    await build_village(memory)

    def passage(content: str, *entity_ids: str) -> NewChunk:
        return NewChunk(
            session_id="s1", content=content, embedding=[1, 0, 0, 0], entity_ids=entity_ids
        )

    async def involved() -> set[str]:
        await memory.index.tally_session_entities("s1")
        return {e.id for e in await memory.queries.session_entities("s1")}

    from_the_graph = await involved()  # grimjaw OWNS ember-blade is sourced from s1
    await memory.index.upsert(
        [passage("At the kettle", "red-kettle"), passage("Mira pours", "red-kettle", "mira")]
    )
    await memory.index.upsert([passage("Mira pours", "red-kettle", "mira")])  # stored again
    assert await involved() - from_the_graph == {"red-kettle", "mira"}
    await memory.index.remove_stale("s1", {content_hash("At the kettle")})
    assert await involved() - from_the_graph == {"red-kettle"}
    await memory.index.remove_stale("s1", set())
    assert await involved() == from_the_graph
