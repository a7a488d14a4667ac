"""Every tool and resource answers on both protocol generations: the initialize handshake
(legacy) and stateless 2026-07-28. What each answers is tested once, in its own module."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.server.conftest import PROTOCOLS, Connect, call, opener
from tests.server.semantic_fixtures import load_facts, load_sessions
from tests.storage.graph_fixtures import build_village


@pytest.mark.parametrize("generation", PROTOCOLS)
@pytest.mark.slow
async def test_every_tool_and_resource_answers_on_each_generation(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder, generation: str
) -> None:
    await build_village(semantic_memory)
    await load_sessions(semantic_memory, offline_embedder)
    await load_facts(semantic_memory, offline_embedder)
    connect: Connect = opener(semantic_memory, generation, offline_embedder)
    async with connect(npc_id="mira") as client:
        sessions = await call(client, "memory.search_sessions", query="caravan Saltmere")
        entities = await call(client, "memory.query_entities", name="Grimjaw")
        summary = await call(client, "memory.get_session_summary", session_id="s1")
        facts = await call(client, "memory.search_facts", query="bridge rebuilt")
        hot = await client.read_resource("glyphoxa://npc/mira/hot")
        npcs = await client.read_resource("glyphoxa://npcs")
    assert sessions["results"] and sessions["scope"] == "npc:mira"
    assert entities["entities"][0]["id"] == "grimjaw"
    assert summary["session_id"] == "s1"
    assert facts["results"]
    assert '"npc":{"id":"mira"' in hot.contents[0].text.replace(" ", "")
    assert "mira" in npcs.contents[0].text
