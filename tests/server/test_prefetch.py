from __future__ import annotations

import gc
import json
from collections.abc import AsyncIterator
from urllib.parse import quote

import pytest
from mcp.shared.exceptions import MCPError

from glyphoxa_mcp.correction import english
from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import read_only
from tests.server.conftest import Connect


@pytest.fixture
async def semantic_memory(spoken_village_dsn: str) -> AsyncIterator[CampaignMemory]:
    """The shared spoken village, read only: a pre-fetch only reads."""
    async with read_only(spoken_village_dsn, 384) as memory:
        yield memory


def uri(npc: str, utterance: str) -> str:
    return f"glyphoxa://npc/{npc}/prefetch?utterance={quote(utterance)}"


async def test_a_reference_to_the_past_brings_entities_and_passages(
    connect_semantic: Connect,
) -> None:
    async with connect_semantic() as client:
        read = await client.read_resource(
            uri("mira", "Do you remember what Grimjaw said about the caravan")
        )
    context = json.loads(read.contents[0].text)
    assert context["temporal_reference"] == "Do you remember"
    assert [e["id"] for e in context["entities"]] == ["grimjaw"]
    assert "Grimjaw (npc): occupation: blacksmith" in context["entity_context"][0]
    assert any("Saltmere" in hit["text"] for hit in context["passages"])
    assert context["prompt"].startswith("## Memory this conversation may need")


async def test_small_talk_fetches_nothing(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    context = await View(semantic_memory, embedder=offline_embedder).prefetch(
        "mira", "Nice weather"
    )
    assert (context.entities, context.passages, context.prompt) == ([], [], "")


async def test_what_the_npc_may_not_know_stays_out(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    context = await View(semantic_memory, embedder=offline_embedder).prefetch(
        "mira",
        "Last time you said the cult meets at the Red Kettle",
    )
    assert [e.id for e in context.entities] == ["red-kettle"]
    # The player's own words are echoed back; nothing else may name the hidden cult.
    assert "cult" not in context.model_dump_json(exclude={"utterance", "heard"}).lower()


async def test_a_misheard_name_is_put_back_before_looking_it_up(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    context = await View(semantic_memory, embedder=offline_embedder).prefetch(
        "mira", "do you remember what grim jaw said"
    )
    assert (context.heard, context.utterance) == (
        "do you remember what grim jaw said",
        "do you remember what Grimjaw said",
    )
    assert [e.id for e in context.entities] == ["grimjaw"]


async def test_only_names_the_npc_may_know_are_put_back(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    heard = "so the kult meets tonight"
    outsider = await View(semantic_memory, embedder=offline_embedder).prefetch("mira", heard)
    insider = await View(semantic_memory, embedder=offline_embedder).prefetch("vask", heard)
    assert outsider.utterance == heard
    assert insider.utterance == "so the Cult meets tonight"
    assert [e.id for e in insider.entities] == ["cult"]
    vask = await View(semantic_memory, embedder=offline_embedder).prefetch(
        "vask",
        "Last time you said the cult meets at the Red Kettle",
    )
    assert "cult" in [e.id for e in vask.entities]


async def test_an_npc_server_prefetches_only_for_its_npc(connect_semantic: Connect) -> None:
    async with connect_semantic(npc_id="mira") as client:
        await client.read_resource(uri("mira", "Grimjaw"))
        with pytest.raises(MCPError, match="speaks for 'mira'"):
            await client.read_resource(uri("grimjaw", "Mira"))
        with pytest.raises(MCPError, match="at most 1000 characters"):
            await client.read_resource(uri("mira", "x" * 1200))


async def test_a_server_warm_up_prepares_what_the_first_pre_fetch_would_load(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    english._frequencies.cache_clear()
    gc.unfreeze()
    view = View(semantic_memory, "mira", offline_embedder)
    await view.warm_up()
    assert english._frequencies.cache_info().currsize == 1
    # What it built is kept out of the cyclic collector's full passes.
    assert gc.get_freeze_count() > 0
    scope = await view.scope()  # cached: the scope warm_up built
    # Its names are prepared already.
    assert SHARED_CORRECTORS.prepared_for(scope.known) is not None
