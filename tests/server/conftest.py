from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from mcp.client import Client

from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.tool_names import NameStyle
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import TEST_EMBEDDING_DIM, read_only, seed_spoken_village, unhurried

Connect = Callable[..., contextlib.AbstractAsyncContextManager[Client]]


PROTOCOLS = ["legacy", "auto"]


@pytest.fixture
def protocol() -> str:
    """The newest protocol generation the SDK negotiates. The logic of a tool is tested once;
    test_protocols.py drives every tool and resource through both generations (the
    initialize handshake, and stateless 2026-07-28)."""
    return "auto"


def opener(
    memory: CampaignMemory, protocol: str, embedder: LocalMiniLMEmbedder | None = None
) -> Connect:
    """A way to open in-memory MCP clients on servers over `memory`."""

    @contextlib.asynccontextmanager
    async def open_client(
        *,
        npc_id: str | None = None,
        tier: Tier = Tier.STANDARD,
        style: NameStyle = NameStyle.DOTTED,
    ) -> AsyncIterator[Client]:
        state = ServerState(View(memory, npc_id, embedder), unhurried(tier))
        async with Client(build_server(state, style), mode=protocol) as client:
            yield client

    return open_client


@pytest.fixture
def connect(memory: CampaignMemory, protocol: str) -> Connect:
    """Open an in-memory MCP client on a server over the test campaign."""
    return opener(memory, protocol)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    return result.structured_content


async def call_error(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail; its error text."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return result.content[0].text


@pytest.fixture
def connect_semantic(
    semantic_memory: CampaignMemory, protocol: str, offline_embedder: LocalMiniLMEmbedder
) -> Connect:
    """Like `connect`, over a campaign whose vectors come from the offline model."""
    return opener(semantic_memory, protocol, offline_embedder)


@pytest.fixture
async def connect_village(village_dsn: str, protocol: str) -> AsyncIterator[Connect]:
    """Like `connect`, over the shared village, read only."""
    async with read_only(village_dsn, TEST_EMBEDDING_DIM) as memory:
        yield opener(memory, protocol)


@pytest.fixture
async def connect_spoken_village(
    spoken_village_dsn: str, protocol: str, offline_embedder: LocalMiniLMEmbedder
) -> AsyncIterator[Connect]:
    """Like `connect_semantic`, over the shared village and its sessions, read only."""
    async with read_only(spoken_village_dsn, 384) as memory:
        yield opener(memory, protocol, offline_embedder)


@pytest.fixture
async def connect_own_spoken_village(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder, protocol: str
) -> Connect:
    """The spoken village in a database of the test's own, for a test that adds to it."""
    await seed_spoken_village(semantic_memory, offline_embedder)
    return opener(semantic_memory, protocol, offline_embedder)
