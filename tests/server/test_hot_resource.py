from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from glyphoxa_mcp.db.database import Database, DatabaseLocation
from glyphoxa_mcp.domain.models import NewEntity, NewFact, NewRelationship, Visibility
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.recall.hot_budgets import HotBudgets
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import PostgresForTests, read_only, seeded_database, unhurried
from tests.server.semantic_fixtures import load_sessions
from tests.storage.graph_fixtures import build_village

Opener = Callable[..., contextlib.AbstractAsyncContextManager[Client]]


async def seed_scene(memory: CampaignMemory, embedder: LocalMiniLMEmbedder) -> None:
    """The village and its sessions, with Mira at the Red Kettle and quests to give."""
    await build_village(memory)
    await load_sessions(memory, embedder)
    graph = memory.graph
    await graph.upsert_relationship(
        NewRelationship(source_id="mira", target_id="red-kettle", rel_type="LOCATED_AT")
    )
    await graph.upsert_entity(
        NewEntity(
            type=EntityType.QUEST,
            name="Find the Caravan",
            attributes={"status": "active", "objective": "Track the wagons to Saltmere"},
        )
    )
    await graph.upsert_entity(
        NewEntity(type=EntityType.QUEST, name="Old Feud", attributes={"status": "done"})
    )
    await graph.upsert_relationship(
        NewRelationship(source_id="grimjaw", target_id="find-the-caravan", rel_type="QUEST_GIVER")
    )


@pytest.fixture(scope="session")
def scene_dsn(test_server: PostgresForTests, offline_embedder: LocalMiniLMEmbedder) -> str:
    async def seed(memory: CampaignMemory) -> None:
        await seed_scene(memory, offline_embedder)

    return seeded_database(test_server, test_server.template_384, 384, seed, shared_as="scene")


@pytest.fixture
async def scene(scene_dsn: str) -> AsyncIterator[CampaignMemory]:
    """The scene seeded once, read only: most tests here only read the hot context."""
    async with read_only(scene_dsn, 384) as memory:
        yield memory


@pytest.fixture
async def own_scene(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> CampaignMemory:
    """The scene in a database of the test's own, for the tests that change it."""
    await seed_scene(semantic_memory, offline_embedder)
    return semantic_memory


@pytest.fixture
def open_server(scene: CampaignMemory, protocol: str):
    return opener_over(scene, protocol)


@pytest.fixture
def open_own_server(own_scene: CampaignMemory, protocol: str):
    return opener_over(own_scene, protocol)


def opener_over(semantic_memory: CampaignMemory, protocol: str):
    @contextlib.asynccontextmanager
    async def opened(
        npc_id: str | None = None, budgets: HotBudgets | None = None
    ) -> AsyncIterator[Client]:
        state = ServerState(View(semantic_memory, npc_id), unhurried(Tier.STANDARD))
        async with Client(build_server(state, budgets=budgets), mode=protocol) as client:
            yield client

    return opened


async def read_json(client: Client, uri: str) -> dict[str, Any]:
    result = await client.read_resource(uri)
    [content] = result.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


async def test_the_template_and_the_npc_list_are_advertised(open_server) -> None:
    async with open_server() as client:
        templates = (await client.list_resource_templates()).resource_templates
        listed = await read_json(client, "glyphoxa://npcs")
    assert sorted(t.uri_template for t in templates) == [
        "glyphoxa://npc/{npc_id}/hot{?session}",
        "glyphoxa://npc/{npc_id}/prefetch{?utterance}",
    ]
    assert {n["id"] for n in listed["npcs"]} == {"grimjaw", "mira", "vask"}
    assert {n["hot_context"] for n in listed["npcs"]} >= {"glyphoxa://npc/grimjaw/hot"}


async def test_hot_context_holds_identity_scene_and_recent_talk(open_server) -> None:
    async with open_server() as client:
        hot = await read_json(client, "glyphoxa://npc/grimjaw/hot")
    assert hot["npc"]["name"] == "Grimjaw" and hot["scope"] == "npc:grimjaw"
    identity = hot["identity"]["text"]
    assert (
        "occupation: blacksmith" in identity and "Grimjaw is a member of Smiths Guild." in identity
    )
    assert "Ember Blade" not in identity  # secret from everyone, Grimjaw included
    assert hot["location"]["id"] == "red-kettle"
    assert [p["id"] for p in hot["present"]] == ["mira"]
    assert [q["name"] for q in hot["active_quests"]] == ["Find the Caravan"]
    assert "Active quest: Find the Caravan - Track the wagons to Saltmere" in hot["scene"]["text"]
    # The current session is the one with the latest talk: s2.
    assert hot["session_id"] == "s2"
    assert [line["speaker"] for line in hot["transcript"]] == ["Mira", "Grimjaw"]
    prompt = hot["prompt"]
    assert prompt.index("## Who you are: Grimjaw") < prompt.index("## What was just said")
    assert "Grimjaw: The Town Watch keeps a ferry at the old mill." in prompt


async def test_the_identity_follows_every_change_to_what_the_npc_knows(
    open_own_server, db384: Database
) -> None:
    open_server = open_own_server
    """The identity is kept between reads; a change by another process to a fact, a
    relationship or an entity shows at the next read."""
    async with (
        open_server() as client,
        await Database.open_dsn(
            DatabaseLocation(db384.location.dsn, "the DM's terminal"), 384, max_size=1
        ) as elsewhere,
    ):
        before = (await read_json(client, "glyphoxa://npc/grimjaw/hot"))["identity"]["text"]
        assert "Grimjaw is a member of Smiths Guild." in before and "Town Watch" in before
        dm = CampaignMemory(elsewhere, "ashfall")

        await dm.graph.upsert_fact(
            NewFact(subject_id="grimjaw", text="Grimjaw swore off dice after the flood.")
        )
        identity = (await read_json(client, "glyphoxa://npc/grimjaw/hot"))["identity"]["text"]
        assert "Grimjaw swore off dice after the flood." in identity

        await dm.graph.delete_relationship("grimjaw", "MEMBER_OF", "smiths-guild")
        identity = (await read_json(client, "glyphoxa://npc/grimjaw/hot"))["identity"]["text"]
        assert "Smiths Guild" not in identity

        await dm.graph.delete_relationship("grimjaw", "LOCATED_AT", "red-kettle")
        hot = await read_json(client, "glyphoxa://npc/grimjaw/hot")
        assert hot["location"] is None and "Location: unknown" in hot["scene"]["text"]

        await dm.graph.upsert_entity(
            NewEntity(
                id="grimjaw",
                type=EntityType.NPC,
                name="Grimjaw",
                attributes={"occupation": "ferryman"},
            )
        )
        identity = (await read_json(client, "glyphoxa://npc/grimjaw/hot"))["identity"]["text"]
        assert "occupation: ferryman" in identity and "blacksmith" not in identity

        # A name turned secret is redacted from what the NPC was told before.
        await dm.graph.upsert_entity(
            NewEntity(
                id="town-watch",
                type=EntityType.FACTION,
                name="Town Watch",
                visibility=Visibility(secret=True),
            )
        )
        identity = (await read_json(client, "glyphoxa://npc/grimjaw/hot"))["identity"]["text"]
        assert "Town Watch" not in identity


async def test_active_quests_are_found_among_many_finished_ones(
    open_own_server, own_scene: CampaignMemory
) -> None:
    open_server, semantic_memory = open_own_server, own_scene
    for number in range(60):  # all before "Find the Caravan" by name
        await semantic_memory.graph.upsert_entity(
            NewEntity(
                type=EntityType.QUEST, name=f"A done deed {number}", attributes={"status": "done"}
            )
        )
    async with open_server() as client:
        hot = await read_json(client, "glyphoxa://npc/grimjaw/hot")
    assert [q["name"] for q in hot["active_quests"]] == ["Find the Caravan"]


async def test_a_named_session_and_the_npcs_own_scope(open_server) -> None:
    async with open_server() as client:
        hot = await read_json(client, "glyphoxa://npc/grimjaw/hot?session=s1")
    said = " ".join(line["text"] for line in hot["transcript"])
    assert hot["session_id"] == "s1" and "Saltmere" in said
    assert "Cult" not in hot["prompt"]  # hidden from Grimjaw, so its line is left out


async def test_budgets_trim_least_relevant_and_oldest_first(open_server) -> None:
    tight = HotBudgets(identity_tokens=50, transcript_tokens=50, scene_tokens=50)
    async with open_server(budgets=tight) as client:
        hot = await read_json(client, "glyphoxa://npc/grimjaw/hot?session=s1")
    for part in ("identity", "recent_transcript", "scene"):
        assert hot[part]["tokens"] <= 50
    assert hot["identity"]["dropped_lines"] > 0
    assert "occupation: blacksmith" in hot["identity"]["text"]  # character first
    assert hot["recent_transcript"]["dropped_lines"] > 0
    assert hot["transcript"][-1]["text"] == "Let us keep that to ourselves for now."  # newest kept


async def test_an_npc_scoped_server_serves_only_its_npc(open_server) -> None:
    async with open_server(npc_id="mira") as client:
        mine = await read_json(client, "glyphoxa://npc/mira/hot")
        listed = await read_json(client, "glyphoxa://npcs")
        with pytest.raises(MCPError, match="speaks for 'mira'"):
            await client.read_resource("glyphoxa://npc/grimjaw/hot")
    assert mine["npc"]["id"] == "mira" and [n["id"] for n in listed["npcs"]] == ["mira"]


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("glyphoxa://npc/grimjw/hot", "Did you mean grimjaw"),
        ("glyphoxa://npc/red-kettle/hot", "is a location, not an NPC"),
        ("glyphoxa://npc/grimjaw/hot?session=s9", "No session 's9'"),
    ],
)
async def test_bad_reads_say_what_is_wrong(open_server, uri: str, message: str) -> None:
    async with open_server() as client:
        with pytest.raises(MCPError, match=message):
            await client.read_resource(uri)
        assert (await read_json(client, "glyphoxa://npc/grimjaw/hot"))["npc"]["id"] == "grimjaw"
