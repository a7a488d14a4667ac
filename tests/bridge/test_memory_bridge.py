from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from mcp.client import Client

from glyphoxa_mcp.app import App
from glyphoxa_mcp.bridge import MemoryBridge
from glyphoxa_mcp.config import Settings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.recorder_server import build_recorder_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import unhurried
from tests.recording.conftest import recording
from tests.storage.graph_fixtures import build_village


@pytest.fixture
async def village(memory: CampaignMemory) -> CampaignMemory:
    await build_village(memory)
    return memory


@contextlib.asynccontextmanager
async def bridge_to(memory: CampaignMemory) -> AsyncIterator[MemoryBridge]:
    state = ServerState(View(memory), unhurried(Tier.FAST))
    async with Client(build_server(state), mode="legacy") as client:
        yield MemoryBridge(client)


@pytest.mark.slow
async def test_a_realtime_call_becomes_a_function_call_output(village: CampaignMemory) -> None:
    async with bridge_to(village) as bridge:
        event = {
            "type": "response.function_call_arguments.done",
            "call_id": "call_42",
            "name": "memory_query_entities",
            "arguments": json.dumps({"name": "grimjaw"}),
        }
        item, response = await bridge.answer_realtime(event)
        assert response == {"type": "response.create"}
        assert item["type"] == "conversation.item.create"
        output = item["item"]
        assert output["type"] == "function_call_output" and output["call_id"] == "call_42"
        assert json.loads(output["output"])["entities"][0]["id"] == "grimjaw"


async def test_an_output_item_event_works_too(village: CampaignMemory) -> None:
    async with bridge_to(village) as bridge:
        event = {
            "type": "response.output_item.done",
            "item": {
                "type": "function_call",
                "call_id": "c1",
                "name": "memory_query_entities",
                "arguments": '{"type": "faction"}',
            },
        }
        item, _ = await bridge.answer_realtime(event)
        assert len(json.loads(item["item"]["output"])["entities"]) == 3


async def test_tool_errors_and_bad_arguments_are_answered_not_raised(
    village: CampaignMemory,
) -> None:
    async with bridge_to(village) as bridge:
        hidden = {"call_id": "c2", "name": "memory_search_sessions", "arguments": '{"query": "x"}'}
        refused = json.loads((await bridge.answer_realtime(hidden))[0]["item"]["output"])
        assert "not available in the FAST tier" in refused["error"]
        garbled = {"call_id": "c3", "name": "memory_query_entities", "arguments": "{name: grimjaw"}
        error = json.loads((await bridge.answer_realtime(garbled))[0]["item"]["output"])
        assert "not a JSON object" in error["error"]
        with pytest.raises(InvalidInputError, match="call_id"):
            await bridge.answer_realtime({"name": "memory_query_entities"})


async def test_a_gemini_tool_call_becomes_function_responses(village: CampaignMemory) -> None:
    async with bridge_to(village) as bridge:
        message = {
            "toolCall": {
                "functionCalls": [
                    {
                        "id": "g1",
                        "name": "memory_query_entities",
                        "args": {"name": "the blacksmith"},
                    },
                    {"id": "g2", "name": "memory_query_entities", "args": {}},
                ]
            }
        }
        reply = await bridge.answer_gemini(message)
        first, second = reply["toolResponse"]["functionResponses"]
        assert first["id"] == "g1" and first["response"]["entities"][0]["id"] == "grimjaw"
        assert second["id"] == "g2" and "at least one of" in second["response"]["error"]
        with pytest.raises(InvalidInputError, match="toolCall"):
            await bridge.answer_gemini({"serverContent": {}})


async def test_underscore_names_are_called_as_the_server_lists_them(
    village: CampaignMemory, caplog: pytest.LogCaptureFixture
) -> None:
    async with bridge_to(village) as bridge:
        assert await bridge.listed_name("memory_query_entities") == "memory.query_entities"
        assert await bridge.listed_name("memory_unknown") == "memory_unknown"
        answer = await bridge.call("memory_query_entities", {"name": "Grimjaw"})
    assert answer["entities"][0]["id"] == "grimjaw"
    assert "not listed by server" not in caplog.text


async def test_the_context_block_joins_the_hot_context_and_what_a_partial_names(
    village: CampaignMemory,
) -> None:
    async with bridge_to(village) as bridge:
        hot = await bridge.context("grimjaw")
        combined = await bridge.context("grimjaw", "have you seen mirra lately")
    assert hot.startswith("## Who you are: Grimjaw")
    assert combined.startswith(hot)
    about = combined[len(hot) :]
    assert about.startswith("\n\n## What this is about\n") and "Mira" in about


@pytest.mark.slow
async def test_recording_through_the_bridge(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder, db384: Database
) -> None:
    await build_village(semantic_memory)
    app = App(Settings(), db384, offline_embedder, chat=None)
    async with recording(app) as recorder:
        state = ServerState(View(semantic_memory), unhurried(Tier.FAST))
        async with (
            Client(build_server(state), mode="legacy") as memory_client,
            Client(build_recorder_server(recorder, "ashfall"), mode="legacy") as recorder_client,
        ):
            bridge = MemoryBridge(memory_client, recorder_client)
            await bridge.start_session("live", title="Live")
            now = datetime.now(UTC)

            def spoken_at(key: str, text: str, seconds: float) -> dict[str, str]:
                at = now + timedelta(seconds=seconds)
                return {"utterance_id": key, "speaker_id": "p1", "speaker_name": "Kael",
                        "text": text, "timestamp": at.isoformat()}  # fmt: skip

            spoken = spoken_at("a1", "Grim jaw, the forge is cold.", -5)
            appended = await bridge.record("live", spoken)
            assert appended["utterances"] == [{"utterance_id": "a1", "new": True}]
            # The campaign is witnessed: Grimjaw hears the table once he has joined it.
            assert "the forge is cold" not in await bridge.context("grimjaw", None, "live")
            await bridge.npc_joined("live", "grimjaw")
            await bridge.record("live", spoken_at("a2", "Grim jaw, light the forge.", 5))
            heard = await bridge.context("grimjaw", None, "live")
            assert "Kael: Grimjaw, light the forge." in heard
            assert "the forge is cold" not in heard
            await bridge.npc_joined("live", "Mira")
            await bridge.npc_left("live", "grimjaw")
            scenes = await semantic_memory.scenes.of_session("live")
            assert [scene.present for scene in scenes] == [
                ("grimjaw",),
                ("grimjaw", "mira"),
                ("mira",),
            ]
            ended = await bridge.end_session("live", wait=True)
            assert ended["state"] == "ended"
            with pytest.raises(InvalidInputError, match="session_id: no session 'nope'"):
                await bridge.record("nope", spoken_at("a3", "Hello?", 6))
        async with Client(build_server(state), mode="legacy") as memory_only:
            with pytest.raises(InvalidInputError, match="no recorder"):
                await MemoryBridge(memory_only).end_session("live")
