"""Subscriptions only to this server's own resources (glyphoxa://...), a bounded number per
connection, and nothing kept for what was never subscribed."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import AsyncIterator

import anyio
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import INVALID_PARAMS

from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.refusals import MAX_ANSWER
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.views.view import View
from tests.conftest import TEST_EMBEDDING_DIM, read_only, unhurried
from tests.server.test_argument_gate import MEGABYTE


@contextlib.asynccontextmanager
async def village_client(
    village_dsn: str, protocol: str = "auto", max_subscriptions: int = 3
) -> AsyncIterator[Client]:
    async with read_only(village_dsn, TEST_EMBEDDING_DIM) as memory:
        state = ServerState(View(memory), unhurried(Tier.DEEP))
        subscriptions = HotSubscriptions(memory, max_per_connection=max_subscriptions)
        async with Client(build_server(state, subscriptions=subscriptions), mode=protocol) as c:
            yield c


async def subscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.subscribe_resource(uri)


async def unsubscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.unsubscribe_resource(uri)


@pytest.mark.parametrize(
    ("uri", "code", "named"),
    [
        ("x://junk/1", -32002, "No resource at uri 'x://junk/1'"),
        ("glyphoxa://npc/mira/prefetch?utterance=hi", INVALID_PARAMS, "cannot be subscribed to"),
        ("glyphoxa://npc/mira/hot?session=" + MEGABYTE, INVALID_PARAMS, "uri must be at most"),
    ],
)
async def test_only_the_servers_own_resources_can_be_subscribed_to(
    village_dsn: str, uri: str, code: int, named: str
) -> None:
    async with village_client(village_dsn, "legacy") as client:
        with pytest.raises(MCPError) as refused:
            await subscribe(client, uri)
        await subscribe(client, "glyphoxa://npc/mira/hot")
    assert refused.value.code == code and named in refused.value.message
    assert len(refused.value.message.encode()) <= MAX_ANSWER


async def test_a_connection_holds_a_bounded_number_of_subscriptions(village_dsn: str) -> None:
    hot = [f"glyphoxa://npc/{npc}/hot" for npc in ("grimjaw", "mira", "vask")]
    async with village_client(village_dsn, "legacy", max_subscriptions=3) as client:
        for uri in hot:
            await subscribe(client, uri)
        await subscribe(client, hot[0])  # again: still three
        with pytest.raises(MCPError, match="already holds 3 subscriptions") as full:
            await subscribe(client, "glyphoxa://npcs")
        await unsubscribe(client, hot[0])
        await subscribe(client, "glyphoxa://npcs")
        # Another connection has its own allowance.
        async with village_client(village_dsn, "legacy", max_subscriptions=3) as other:
            await subscribe(other, "glyphoxa://npcs")
    assert full.value.code == INVALID_PARAMS and "uri" in full.value.message


async def test_unsubscribing_from_what_was_never_subscribed_keeps_nothing(
    village_dsn: str,
) -> None:
    async with read_only(village_dsn, TEST_EMBEDDING_DIM) as memory:
        subscriptions = HotSubscriptions(memory)
        server = build_server(
            ServerState(View(memory), unhurried(Tier.DEEP)), subscriptions=subscriptions
        )
        async with Client(server, mode="legacy") as client:
            for n in range(20):
                await unsubscribe(client, f"x://junk/{n}")
            await subscribe(client, "glyphoxa://npcs")
            assert list(subscriptions._sessions) == ["glyphoxa://npcs"]
            await unsubscribe(client, "glyphoxa://npcs")
            assert not subscriptions._sessions


async def test_listen_streams_take_only_the_servers_own_resources(village_dsn: str) -> None:
    async with village_client(village_dsn) as client:
        with anyio.fail_after(10), pytest.raises(MCPError) as refused:
            async with client.listen(resource_subscriptions=["x://junk/1"]):
                pass
    assert refused.value.code == INVALID_PARAMS and "uri 'x://junk/1'" in refused.value.message
