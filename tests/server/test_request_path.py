"""One call, one validation of its arguments and one read of the viewer's scope (issue 29):
counted during real calls over an MCP client, on the spoken village, for an NPC viewer.

The arguments are validated by the argument gate, which hands what it validated to the SDK
(server/tool_arguments.py's CheckedArguments); the scope is read once by the read function
and passed down (views/reading.py). Both are counted where they cannot be missed: every
validation goes through the tool's argument model, every read of a scope through the
campaign's entity cache.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Hashable
from typing import Any
from urllib.parse import quote

import pytest

from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.server.resource_uris import hot_uri
from glyphoxa_mcp.server.tools import ARGUMENTS
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.conftest import read_only
from tests.server.conftest import Connect, call, opener

NPC = "mira"
# Each tool with arguments that take it down its whole path for an NPC: the withheld
# sessions, a named session, an entity's relationships.
CALLS: dict[str, dict[str, Any]] = {
    "memory.search_sessions": {"query": "caravan bridge river", "session_id": "s2", "top_k": 3},
    "memory.search_facts": {"query": "debt silver owed", "entity": "grimjaw", "top_k": 3},
    "memory.get_session_summary": {"session_id": "s1"},
    "memory.query_entities": {"name": "grimjaw", "limit": 2},
}


@pytest.fixture
async def memory(spoken_village_dsn: str) -> AsyncIterator[CampaignMemory]:
    """The shared spoken village, read only."""
    async with read_only(spoken_village_dsn, 384) as memory:
        yield memory


@pytest.fixture
def connect(memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder) -> Connect:
    return opener(memory, "auto", offline_embedder)


class Counted:
    """Counts validations of each tool's arguments and reads of a viewer's scope."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, memory: CampaignMemory) -> None:
        self.validations: dict[str, int] = {}
        self.scopes: list[Hashable] = []
        for tool, arguments in ARGUMENTS.items():
            model = arguments.arg_model
            monkeypatch.setattr(model, "model_validate", self._counting(tool, model))
        cache = memory.entity_cache
        get_updated = cache.get_updated

        async def counting_lookup(key: Hashable, *args: Any, **kwargs: Any) -> Any:
            if isinstance(key, tuple) and key[:1] == ("scope",):
                self.scopes.append(key)
            return await get_updated(key, *args, **kwargs)

        monkeypatch.setattr(cache, "get_updated", counting_lookup)

    def _counting(self, tool: str, model: Any) -> Callable[..., Any]:
        validate = model.model_validate

        def counting(*args: Any, **kwargs: Any) -> Any:
            self.validations[tool] = self.validations.get(tool, 0) + 1
            return validate(*args, **kwargs)

        return counting

    def reset(self) -> None:
        self.validations.clear()
        self.scopes.clear()


@pytest.mark.parametrize("tool", list(CALLS))
async def test_a_tool_call_validates_its_arguments_once_and_reads_the_scope_once(
    tool: str, connect: Connect, memory: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connect(npc_id=NPC) as client:
        await call(client, tool, **CALLS[tool])  # the scope built and cached, as a server has it
        counted = Counted(monkeypatch, memory)
        result = await call(client, tool, **CALLS[tool])
    assert result["scope"] == f"npc:{NPC}"
    assert counted.validations == {tool: 1}
    assert counted.scopes == [("scope", NPC)]


async def test_refused_arguments_are_validated_once_and_read_no_scope(
    connect: Connect, memory: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connect(npc_id=NPC) as client:
        counted = Counted(monkeypatch, memory)
        refused = await client.call_tool("memory.search_sessions", {"query": "x", "top_k": -1})
    assert refused.is_error
    assert counted.validations == {"memory.search_sessions": 1}
    assert counted.scopes == []


@pytest.mark.parametrize(
    "uri",
    [
        hot_uri(NPC),
        f"glyphoxa://npc/{NPC}/prefetch?utterance={quote('Do you remember what Grimjaw said')}",
    ],
    ids=["hot", "prefetch"],
)
async def test_an_npc_reading_its_own_context_reads_its_scope_once(
    uri: str, connect: Connect, memory: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connect(npc_id=NPC) as client:
        await client.read_resource(uri)
        counted = Counted(monkeypatch, memory)
        await client.read_resource(uri)
    assert counted.scopes == [("scope", NPC)]
