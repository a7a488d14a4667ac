from __future__ import annotations

import pytest

from glyphoxa_mcp.domain.models import NewEntity, NewRelationship, Provenance
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.server.conftest import Connect, call, call_error, opener
from tests.storage.graph_fixtures import build_village

TOOL = "memory.query_entities"


@pytest.fixture
def connect(connect_village: Connect) -> Connect:
    """The shared village, read only: most tests here only ask."""
    return connect_village


@pytest.fixture
async def own_village(memory: CampaignMemory, protocol: str) -> Connect:
    """A village of the test's own, for the tests that add to it."""
    await build_village(memory)
    return opener(memory, protocol)


async def test_a_misspelled_name_finds_the_entity_with_its_relationships(connect: Connect) -> None:
    async with connect() as client:
        result = await call(client, TOOL, name="Grimjw")
    [grimjaw] = result["entities"]
    assert grimjaw["id"] == "grimjaw" and grimjaw["match"] == "fuzzy"
    assert grimjaw["attributes"]["occupation"] == "blacksmith"
    sentences = {r["sentence"] for r in grimjaw["relationships"]}
    assert "Grimjaw is a member of Smiths Guild." in sentences
    assert "Mira knows Grimjaw." in sentences
    owns = next(r for r in grimjaw["relationships"] if r["type"] == "OWNS")
    assert owns["secret"] is True  # the DM sees secrets, marked
    assert owns["provenance"]["unconfirmed"] is True and owns["provenance"]["confidence"] == 0.4


async def test_aliases_and_types_select_entities(connect: Connect) -> None:
    async with connect() as client:
        by_alias = await call(client, TOOL, name="the blacksmith")
        factions = await call(client, TOOL, type="faction")
    assert [e["id"] for e in by_alias["entities"]] == ["grimjaw"]
    assert by_alias["entities"][0]["match"] == "alias"
    assert [e["id"] for e in factions["entities"]] == ["cult", "smiths-guild", "town-watch"]


async def test_related_to_walks_the_graph_within_the_tier_depth(connect: Connect) -> None:
    async with connect(tier=Tier.DEEP) as client:
        members = await call(client, TOOL, related_to="smiths guild", relation="member of")
        far = await call(client, TOOL, related_to="Grimjaw", depth=9)
    assert [e["id"] for e in members["entities"]] == ["grimjaw"]
    assert members["entities"][0]["hops"] == 1
    assert far["depth"] == {"requested": 9, "used": 3, "clamped": True}
    watch = next(e for e in far["entities"] if e["id"] == "town-watch")
    assert watch["hops"] == 2 and watch["path"] == ["grimjaw", "smiths-guild", "town-watch"]


async def test_counts_are_clamped_and_the_clamp_reported(connect: Connect) -> None:
    async with connect(tier=Tier.FAST) as client:
        result = await call(client, TOOL, type="npc", limit=500)
        low = await call(client, TOOL, type="npc", limit=0)
    assert result["limit"] == {"requested": 500, "used": 10, "clamped": True}
    assert low["limit"] == {"requested": 0, "used": 1, "clamped": True}
    assert len(low["entities"]) == 1


async def test_an_npc_never_sees_what_it_may_not_know(connect: Connect) -> None:
    async with connect(npc_id="mira") as client:
        cult = await call(client, TOOL, name="cult")
        factions = await call(client, TOOL, type="faction")
        grimjaw = await call(client, TOOL, name="grimjaw")
        vask = await call(client, TOOL, related_to="Captain Oriel Vask", depth=2)
    assert cult["entities"] == [] and cult["scope"] == "npc:mira"
    assert "cult" not in {e["id"] for e in factions["entities"]}
    text = str(grimjaw)
    assert "ember-blade" not in text and "Ember Blade" not in text and "OWNS" not in text
    assert vask["entities"] == []


async def test_an_npc_sees_its_own_secrets_marked(connect: Connect) -> None:
    async with connect(npc_id="vask") as client:
        result = await call(client, TOOL, name="cult")
    [cult] = result["entities"]
    assert cult["secret"] is True
    assert [r["sentence"] for r in cult["relationships"]] == [
        "Captain Oriel Vask is a member of Cult."
    ]


async def test_dm_confirmed_low_confidence_is_not_a_rumour(
    own_village: Connect, memory: CampaignMemory
) -> None:
    connect = own_village
    await memory.graph.upsert_entity(NewEntity(type=EntityType.LOCATION, name="Old Mill"))
    await memory.graph.upsert_relationship(
        NewRelationship(
            source_id="mira",
            target_id="old-mill",
            rel_type="LOCATED_AT",
            provenance=Provenance(confidence=0.3, source="inferred", dm_confirmed=True),
        )
    )
    async with connect() as client:
        result = await call(client, TOOL, name="old mill")
    [rel] = result["entities"][0]["relationships"]
    assert rel["provenance"]["unconfirmed"] is False


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({}, "at least one of name, type or related_to"),
        ({"type": "dragon"}, "type"),
        ({"name": "x" * 10_000}, "name"),
        ({"name": "Grimjaw", "relation": "KNOWS"}, "relation needs related_to"),
        ({"limit": "many", "type": "npc"}, "limit"),
        ({"related_to": "Grimjaw", "relation": "'; DROP TABLE entities; --"}, "relation"),
        ({"name": "bad\x00byte"}, "NUL"),
    ],
)
async def test_bad_input_is_an_error_naming_the_problem(
    connect: Connect, arguments: dict[str, object], named: str
) -> None:
    async with connect() as client:
        error = await call_error(client, TOOL, **arguments)
        assert named in error
        # The server keeps serving.
        assert (await call(client, TOOL, name="Grimjaw"))["entities"]


async def test_unknown_names_return_nothing_with_a_note(connect: Connect) -> None:
    async with connect() as client:
        result = await call(client, TOOL, name="Smaug")
        related = await call(client, TOOL, related_to="Smaug")
    assert result["entities"] == [] and "No entity matched" in result["note"]
    assert related["entities"] == [] and "Smaug" in related["note"]


async def test_relationships_are_shared_out_over_the_entities_returned(
    memory: CampaignMemory, own_village: Connect
) -> None:
    connect = own_village
    # A market with 30 stalls: asked alone it lists 25; among 12 places, 5 each.
    await memory.graph.upsert_entity(NewEntity(type=EntityType.LOCATION, name="Grand Market"))
    for stall in range(30):
        await memory.graph.upsert_entity(
            NewEntity(type=EntityType.LOCATION, name=f"Stall {stall:02}")
        )
        await memory.graph.upsert_relationship(
            NewRelationship(
                source_id=f"stall-{stall:02}", target_id="grand-market", rel_type="PART_OF"
            )
        )
    async with connect() as client:
        alone = await call(client, TOOL, name="Grand Market", limit=1)
        places = await call(client, TOOL, type="location", limit=12)
    [market] = alone["entities"]
    assert alone["relationships_per_entity"] == 25 and len(market["relationships"]) == 25
    # The first by type, then by the other end: stalls 00-24.
    assert [r["other_name"] for r in market["relationships"]][:2] == ["Stall 00", "Stall 01"]
    assert places["relationships_per_entity"] == 5 and len(places["entities"]) == 12
    assert max(len(e["relationships"]) for e in places["entities"]) == 5
