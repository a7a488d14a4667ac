from __future__ import annotations

from pathlib import PurePath

import pytest

from glyphoxa_mcp.domain.models import NewEntity, NewRelationship, Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.lore.documents import parse_document
from glyphoxa_mcp.pipeline.lore_embedding import add_lore
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.server.conftest import Connect, call, call_error, opener

TOOL = "memory.search_facts"


@pytest.fixture
def connect_semantic(connect_spoken_village: Connect) -> Connect:
    """The shared village with its facts, read only: most tests here only search."""
    return connect_spoken_village


async def test_facts_are_found_by_meaning_with_provenance_and_time(
    connect_semantic: Connect,
) -> None:
    async with connect_semantic() as client:
        result = await call(client, TOOL, query="who repaired the crossing?", top_k=3)
    top = result["results"][0]
    assert top["text"] == "The bridge was rebuilt by the Town Watch after the flood."
    assert top["kind"] == "fact" and top["subject_name"] == "Town Watch"
    assert top["story_day"] == 5 and top["occurred_at"].startswith("2026-03-06")
    assert "meaning" in top["matched_by"]


async def test_low_confidence_facts_are_marked_unconfirmed(connect_semantic: Connect) -> None:
    async with connect_semantic() as client:
        result = await call(client, TOOL, query="debt silver owed", entity="grimjaw")
    debt = next(h for h in result["results"] if "forty silver" in h["text"])
    assert debt["provenance"]["unconfirmed"] is True and debt["provenance"]["confidence"] == 0.5
    assert result["entity"] == {"id": "grimjaw", "name": "Grimjaw", "type": "npc"}


async def test_relationships_come_as_sentences(connect_semantic: Connect) -> None:
    async with connect_semantic() as client:
        result = await call(client, TOOL, query="Is Grimjaw a member of a guild?", top_k=10)
    sentences = [h["text"] for h in result["results"] if h["kind"] == "relationship"]
    assert "Grimjaw is a member of Smiths Guild." in sentences


@pytest.mark.slow
async def test_lore_passages_come_through_as_the_output_schema_says(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder, protocol: str
) -> None:
    # The client checks every result against the tool's outputSchema.
    tides = parse_document("# Tides\nThe causeway floods twice a day.\n", "t.md", PurePath("t.md"))
    db, campaign = semantic_memory.db, semantic_memory.campaign_id
    await add_lore(db, campaign, [tides], Visibility(), offline_embedder)
    async with opener(semantic_memory, protocol, offline_embedder)() as client:
        result = await call(client, TOOL, query="when does the causeway flood?", top_k=3)
    hit = result["results"][0]
    assert (hit["kind"], hit["document"], hit["heading"], hit["subject_id"]) == (
        "lore",
        "t",
        "Tides",
        None,
    )


@pytest.mark.slow
async def test_a_hubs_best_relationships_are_found_among_many(
    connect_own_spoken_village: Connect, semantic_memory: CampaignMemory
) -> None:
    connect_semantic = connect_own_spoken_village
    graph = semantic_memory.graph
    for number in range(40):
        await graph.upsert_entity(NewEntity(type=EntityType.NPC, name=f"Patron {number}"))
        await graph.upsert_relationship(
            NewRelationship(source_id=f"patron-{number}", target_id="grimjaw", rel_type="KNOWS")
        )
    async with connect_semantic() as client:
        result = await call(client, TOOL, query="Is Grimjaw a member of a guild?", top_k=2)
        patrons = await call(client, TOOL, query="Patron 7 and Grimjaw", top_k=5)
        knows = await call(client, TOOL, query="Who knows Grimjaw?", top_k=10)
    sentences = [h["text"] for h in result["results"] if h["kind"] == "relationship"]
    assert sentences[0] == "Grimjaw is a member of Smiths Guild."
    # The relationship's type counts as words too: "knows" ranks every KNOWS first.
    known = [h["text"] for h in knows["results"] if h["kind"] == "relationship"]
    assert known and all(" knows " in sentence for sentence in known)
    assert "Patron 7 knows Grimjaw." in [h["text"] for h in patrons["results"]]


async def test_story_time_and_real_time_filters(connect_semantic: Connect) -> None:
    async with connect_semantic() as client:
        story = await call(
            client, TOOL, query="bridge stew silver cellar", after="day 3", before="day 6", top_k=10
        )
        real = await call(
            client, TOOL, query="bridge stew silver cellar", before="2026-03-04", top_k=10
        )
    assert [h["text"] for h in story["results"]] == [
        "The bridge was rebuilt by the Town Watch after the flood."
    ]
    assert {h["story_day"] for h in real["results"] if h["kind"] == "fact"} == {1, 2}


async def test_an_npc_gets_no_secret_and_no_text_naming_one(connect_semantic: Connect) -> None:
    async with connect_semantic(npc_id="mira") as client:
        result = await call(client, TOOL, query="Vask cult cellar anvil ember blade", top_k=20)
    text = " ".join(h["text"] for h in result["results"])
    assert "cult" not in text.lower() and "Ember Blade" not in text and "anvil" not in text
    async with connect_semantic(npc_id="vask") as client:
        vask = await call(client, TOOL, query="Vask cult cellar", top_k=5)
    assert any("cult's cellar" in h["text"] for h in vask["results"])


async def test_the_dm_sees_secrets_marked(connect_semantic: Connect) -> None:
    async with connect_semantic() as client:
        result = await call(client, TOOL, query="anvil ember blade", top_k=5)
    hidden = next(h for h in result["results"] if "anvil" in h["text"])
    assert hidden["secret"] is True


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"query": "x", "after": "yesterday"}, "after"),
        ({"query": "x", "session_id": "nope"}, "No session 'nope'"),
        ({"query": "x" * 2000}, "query"),
    ],
)
async def test_bad_input_names_the_problem(
    connect_semantic: Connect, arguments: dict[str, object], named: str
) -> None:
    async with connect_semantic() as client:
        assert named in await call_error(client, TOOL, **arguments)


async def test_unknown_entities_and_blank_queries_return_notes(connect_semantic: Connect) -> None:
    async with connect_semantic() as client:
        unknown = await call(client, TOOL, query="gold", entity="Smaug")
        blank = await call(client, TOOL, query="")
    assert unknown["results"] == [] and "Smaug" in unknown["note"]
    assert blank["results"] == [] and "blank" in blank["note"]
