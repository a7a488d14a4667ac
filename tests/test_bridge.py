from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

import pytest
from mcp.client import Client

from glyphoxa_mcp.bridge import MemoryBridge
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.server.app import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.tiers import Tier
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import unhurried
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
