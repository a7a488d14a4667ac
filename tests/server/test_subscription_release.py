"""Subscriptions end with their connection: a client that subscribes and goes away leaves
nothing held, over real HTTP on loopback (streamable HTTP, handshake era)."""

from __future__ import annotations

import re
import warnings

import anyio
import httpx
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.server.metrics import Metrics
from glyphoxa_mcp.server.resource_uris import hot_uri
from tests.server.http_serving import load_demo, mcp_client, serving

CYCLES = 50
HOT = hot_uri("ysolde")


NPC_URL_PATH = "/c/demo/npc/ysolde/standard/mcp"


async def subscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.subscribe_resource(uri)


async def held(http: httpx.AsyncClient) -> int:
    page = (await http.get("/metrics")).text
    found = re.search(r"^glyphoxa_subscriptions (\S+)$", page, re.MULTILINE)
    assert found, page
    return int(float(found.group(1)))


async def until_held(http: httpx.AsyncClient, count: int) -> int:
    """The gauge once it reads `count` (a closed session is discarded just after its DELETE
    is answered), or what it reads after a bounded wait."""
    with anyio.move_on_after(5):
        while await held(http) != count:
            await anyio.sleep(0.05)
    return await held(http)


@pytest.mark.e2e
async def test_subscriptions_are_released_when_their_session_closes(db256: Database) -> None:
    await load_demo(db256)
    async with (
        serving(db256, auth=False, metrics=Metrics()) as base,
        httpx.AsyncClient(base_url=base) as http,
        mcp_client(f"{base}{NPC_URL_PATH}") as staying,
    ):
        await subscribe(staying, HOT)
        await subscribe(staying, f"{HOT}?session=s1")
        before = await held(http)
        assert before == 2
        for _ in range(CYCLES):
            async with mcp_client(f"{base}{NPC_URL_PATH}") as leaving:
                await subscribe(leaving, HOT)
        assert await until_held(http, before) == before
        # The connection that stayed still holds its own and still hears about changes.
        async with mcp_client(f"{base}{NPC_URL_PATH}") as again:
            await subscribe(again, HOT)
            assert await held(http) == before + 1
        assert await until_held(http, before) == before
