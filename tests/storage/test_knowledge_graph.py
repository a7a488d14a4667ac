from __future__ import annotations

import pytest

from glyphoxa_mcp.domain.models import (
    NewEntity,
    NewFact,
    NewRelationship,
    Provenance,
    Visibility,
    build,
)
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.storage.graph_fixtures import build_village, rel


async def test_entities_get_readable_ids_and_round_trip(memory: CampaignMemory) -> None:
    stored = await memory.graph.upsert_entity(
        NewEntity(
            type=EntityType.NPC,
            name="Captain Ysolde Ka'vesh",
            aliases=("the captain",),
            attributes={"mood": "wary", "age": 41},
        )
    )
    assert stored.id == "captain-ysolde-kavesh"
    assert await memory.graph.get_entity(stored.id) == stored


async def test_upserting_an_entity_again_updates_it_in_place(memory: CampaignMemory) -> None:
    first = await memory.graph.upsert_entity(NewEntity(type=EntityType.NPC, name="Mira"))
    second = await memory.graph.upsert_entity(
        NewEntity(type=EntityType.NPC, name="Mira", attributes={"class": "ranger"})
    )
    assert first.id == second.id and second.attributes == {"class": "ranger"}
    assert len(await memory.graph.find_entities(type=EntityType.NPC)) == 1


async def test_find_matches_names_and_aliases_exact_first(memory: CampaignMemory) -> None:
    await build_village(memory)
    assert [e.id for e in await memory.graph.find_entities(name="GRIMJAW")] == ["grimjaw"]
    assert [e.id for e in await memory.graph.find_entities(name="the Blacksmith")] == ["grimjaw"]
    partial = await memory.graph.find_entities(name="guild")
    assert [e.id for e in partial] == ["smiths-guild"]
    await memory.graph.upsert_entity(NewEntity(type=EntityType.LOCATION, name="Red"))
    assert [e.id for e in await memory.graph.find_entities(name="red")] == ["red", "red-kettle"]
    factions = await memory.graph.find_entities(type=EntityType.FACTION)
    assert {e.id for e in factions} == {"smiths-guild", "town-watch", "cult"}


async def test_find_treats_like_wildcards_as_text(memory: CampaignMemory) -> None:
    await build_village(memory)
    assert await memory.graph.find_entities(name="%") == []
    assert await memory.graph.find_entities(name="_") == []


async def test_find_hides_what_the_npc_may_not_know(memory: CampaignMemory) -> None:
    await build_village(memory)
    assert await memory.graph.find_entities(name="cult", npc_id="grimjaw") == []
    assert [e.id for e in await memory.graph.find_entities(name="cult", npc_id="vask")] == ["cult"]
    assert [e.id for e in await memory.graph.find_entities(name="cult")] == ["cult"]


async def test_bidirectional_relationships_are_stored_both_ways(memory: CampaignMemory) -> None:
    await build_village(memory)
    guild = await memory.graph.relationships_of("smiths-guild", direction="outgoing")
    watch = await memory.graph.relationships_of("town-watch", direction="outgoing")
    assert ("smiths-guild", "ALLIED_WITH", "town-watch") in {
        (r.source_id, r.rel_type, r.target_id) for r in guild
    }
    assert [(r.source_id, r.rel_type, r.target_id) for r in watch] == [
        ("town-watch", "ALLIED_WITH", "smiths-guild")
    ]
    both = await memory.graph.relationships_of("town-watch")
    assert len(both) == 1  # the pair is reported once
    assert await memory.graph.delete_relationship("town-watch", "ALLIED_WITH", "smiths-guild")
    assert await memory.graph.relationships_of("smiths-guild", rel_type="ALLIED_WITH") == []


async def test_relationship_types_are_normalised_and_custom_ones_allowed(
    memory: CampaignMemory,
) -> None:
    await build_village(memory)
    stored = await memory.graph.upsert_relationship(rel("mira", "owes money to", "grimjaw"))
    assert stored.rel_type == "OWES_MONEY_TO"
    with pytest.raises(InvalidInputError, match="rel_type"):
        build(NewRelationship, source_id="mira", target_id="grimjaw", rel_type="!!")


async def test_provenance_round_trips_with_lower_case_keys(memory: CampaignMemory) -> None:
    await build_village(memory)
    [owns] = await memory.graph.relationships_of("grimjaw", rel_type="OWNS")
    assert owns.provenance.confidence == 0.4 and owns.provenance.source == "inferred"
    assert owns.provenance.session_id == "s1" and owns.provenance.dm_confirmed is False
    async with memory.graph._pool.acquire() as conn:
        raw = await conn.fetchval("SELECT provenance FROM relationships WHERE id = $1", owns.id)
    assert set(raw) == {"session_id", "timestamp", "confidence", "source", "dm_confirmed"}


async def test_relationships_to_unknown_entities_are_refused(memory: CampaignMemory) -> None:
    await build_village(memory)
    with pytest.raises(NotFoundError, match="target entity does not exist"):
        await memory.graph.upsert_relationship(rel("grimjaw", "KNOWS", "nobody"))
    with pytest.raises(InvalidInputError, match="itself"):
        await memory.graph.upsert_relationship(rel("grimjaw", "KNOWS", "grimjaw"))


async def test_deleting_an_entity_takes_its_relationships_facts_and_knowledge(
    memory: CampaignMemory,
) -> None:
    await build_village(memory)
    assert await memory.graph.delete_entity("vask")
    assert not await memory.graph.delete_entity("vask")
    cult = await memory.graph.get_entity("cult")
    assert cult.visibility.known_by == ()  # a new 'vask' must not inherit the secret
    assert await memory.graph.relationships_of("cult") == []
    with pytest.raises(NotFoundError, match="No entity 'vask'"):
        await memory.graph.get_entity("vask")


async def test_the_same_fact_is_stored_once_and_updated(memory: CampaignMemory) -> None:
    await build_village(memory)
    fact = NewFact(
        subject_id="mira",
        text="Mira owes Grimjaw ten gold.",
        provenance=Provenance(confidence=0.5, source="stated"),
    )
    first = await memory.graph.upsert_fact(fact)
    second = await memory.graph.upsert_fact(
        fact.model_copy(
            update={
                "provenance": Provenance(confidence=0.9, source="stated"),
                "story_day": 4.5,
                "embedding": [0, 1, 0, 0],
            }
        )
    )
    assert first.id == second.id
    assert second.provenance.confidence == 0.9 and second.story_day == 4.5
    assert [f.id for f in await memory.graph.facts_about("mira")] == [first.id]


async def test_facts_about_respect_scope(memory: CampaignMemory) -> None:
    await build_village(memory)
    everyone = await memory.graph.facts_about("grimjaw", npc_id="mira")
    dm = await memory.graph.facts_about("grimjaw")
    assert len(dm) == 3 and len(everyone) == 2
    assert all("Ember Blade" not in f.text for f in everyone)


async def test_campaigns_never_see_each_others_graph(
    memory: CampaignMemory, other_campaign: CampaignMemory
) -> None:
    await build_village(memory)
    assert await other_campaign.graph.find_entities(name="grimjaw") == []
    with pytest.raises(NotFoundError):
        await other_campaign.graph.get_entity("grimjaw")
    fact = (await memory.graph.facts_about("grimjaw"))[0]
    with pytest.raises(NotFoundError):
        await other_campaign.graph.get_fact(fact.id)
    assert not await other_campaign.graph.delete_fact(fact.id)
    with pytest.raises(NotFoundError):
        await other_campaign.graph.upsert_relationship(rel("grimjaw", "KNOWS", "mira"))


@pytest.mark.parametrize(
    ("model", "values", "field"),
    [
        (NewEntity, {"type": "dragon", "name": "Smaug"}, "type"),
        (NewEntity, {"type": "npc", "name": "   "}, "name"),
        (NewEntity, {"type": "npc", "name": "x" * 201}, "name"),
        (NewEntity, {"type": "npc", "name": "Ok", "id": "has spaces"}, "id"),
        (
            NewEntity,
            {"type": "npc", "name": "Ok", "attributes": {"bio": "x" * 70_000}},
            "attributes",
        ),
        (NewFact, {"text": ""}, "text"),
        (NewFact, {"text": "ok", "provenance": {"confidence": 1.5}}, "provenance.confidence"),
    ],
)
def test_bad_graph_input_names_the_field(
    model: type, values: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        build(model, **values)
    assert caught.value.field == field


async def test_find_refuses_blank_names(memory: CampaignMemory) -> None:
    with pytest.raises(InvalidInputError, match="blank"):
        await memory.graph.find_entities(name="  ")


async def test_entities_are_found_by_an_attribute_among_many(memory: CampaignMemory) -> None:
    # 60 finished quests come first by name; the active ones after them are still found,
    # whatever the case of their status, and a secret one only by those who know it.
    await build_village(memory)
    for number in range(60):
        await memory.graph.upsert_entity(
            NewEntity(
                type=EntityType.QUEST, name=f"A done deed {number}", attributes={"status": "done"}
            )
        )
    for name, status, visibility in [
        ("Find the Caravan", "Active", Visibility()),
        ("Guard the Gate", "open", Visibility()),
        ("Poison the Well", "active", Visibility(secret=True, known_by=("vask",))),
        ("Zeal", "paused", Visibility()),
    ]:
        await memory.graph.upsert_entity(
            NewEntity(
                type=EntityType.QUEST,
                name=name,
                attributes={"status": status},
                visibility=visibility,
            )
        )
    await memory.graph.upsert_entity(
        NewEntity(type=EntityType.ITEM, name="Active Stone", attributes={"status": "active"})
    )

    async def active(npc_id: str | None) -> list[str]:
        found = await memory.graph.find_by_attribute(
            EntityType.QUEST, "status", ["ACTIVE", "open"], npc_id=npc_id, limit=50
        )
        return [e.name for e in found]

    assert await active(None) == ["Find the Caravan", "Guard the Gate", "Poison the Well"]
    assert await active("mira") == ["Find the Caravan", "Guard the Gate"]
    assert await active("vask") == ["Find the Caravan", "Guard the Gate", "Poison the Well"]
