"""Memory through an outage: a real PostgreSQL of its own, frozen and restarted under a running
HTTP server, with real MCP clients on loopback.

The times measured are printed (`pytest -s`) for the figures in the closing note.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import anyio
import httpx
import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewEntry
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.server.metrics import Metrics
from glyphoxa_mcp.server.outcomes import UNAVAILABLE
from glyphoxa_mcp.server.resource_uris import hot_uri
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.own_postgres import OwnPostgres, demo_database, own_postgres_server
from tests.server.http_serving import mcp_client, serving

pytestmark = pytest.mark.e2e

DEADLINE_MS = 1500
# Loopback HTTP, the client and a busy two-core machine on top of the deadline.
SLACK_S = 0.7
HOT = hot_uri("ysolde")


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[OwnPostgres]:
    with own_postgres_server("glyphoxa-outage-") as own:
        yield own


@pytest.fixture
async def demo_db(own_postgres: OwnPostgres) -> AsyncIterator[Database]:
    async with demo_database(own_postgres, "outage", datetime(2026, 3, 1, tzinfo=UTC)) as db:
        yield db


def line(text: str) -> NewEntry:
    return NewEntry(
        speaker_id="ysolde",
        speaker_name="Ysolde",
        text=text,
        spoken_at=datetime(2026, 3, 1, 20, tzinfo=UTC),
    )


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def hot_context(client: Client) -> dict[str, object]:
    read = await client.read_resource(HOT)
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    return json.loads(content.text)


async def until_answered(client: Client, limit_s: float) -> float:
    """Seconds until a tool call answers without error."""
    started = time.monotonic()
    with anyio.fail_after(limit_s):
        while True:
            result = await client.call_tool("memory.query_entities", {"name": "Berrit"})
            if not result.is_error:
                return time.monotonic() - started
            await anyio.sleep(0.1)


async def test_a_stalled_database_is_answered_within_the_deadline_and_keeps_the_npcs_identity(
    own_postgres: OwnPostgres, demo_db: Database
) -> None:
    policies = {tier: tier_policy(tier, DEADLINE_MS) for tier in Tier}
    metrics = Metrics()
    async with (
        serving(demo_db, auth=False, policies=policies, metrics=metrics) as base,
        mcp_client(f"{base}/c/demo/npc/ysolde/standard/mcp") as client,
        httpx.AsyncClient(base_url=base) as http,
    ):
        before = await hot_context(client)
        assert before["degraded"] is False
        assert not (await client.call_tool("memory.query_entities", {"name": "Berrit"})).is_error

        with own_postgres.frozen():
            started = time.monotonic()
            result = await client.call_tool("memory.query_entities", {"name": "Berrit"})
            tool_s = time.monotonic() - started
            # Unavailable once the guard's check has failed; until then (it may be slow, not
            # stalled) the call is cancelled at its deadline saying so, never "unavailable".
            told = text_of(result)
            assert result.is_error and (
                UNAVAILABLE in told or "before the database answered a check" in told
            ), told
            assert "deeper tier" not in told
            assert tool_s < DEADLINE_MS / 1000 + SLACK_S

            started = time.monotonic()
            health = await http.get("/healthz")
            health_s = time.monotonic() - started
            assert health.status_code == 503
            assert health.json()["database"] == "unavailable"
            assert health_s < 1.0 + SLACK_S

            started = time.monotonic()
            during = await hot_context(client)
            hot_s = time.monotonic() - started
            assert during["degraded"] is True and isinstance(during["age_s"], float)
            assert during["identity"] == before["identity"]
            assert during["prompt"] == before["prompt"]
            assert hot_s < DEADLINE_MS / 1000 + SLACK_S

            # Known to be down: answered at once, no wait for the deadline.
            with anyio.fail_after(5):
                while b"glyphoxa_memory_degraded 1.0" not in (await http.get("/metrics")).content:
                    await anyio.sleep(0.1)
            started = time.monotonic()
            again = await client.call_tool("memory.search_facts", {"query": "the bell"})
            known_down_s = time.monotonic() - started
            assert again.is_error and UNAVAILABLE in text_of(again)
            assert known_down_s < 0.3
            exposition = (await http.get("/metrics")).text
            assert 'reason="unavailable"' in exposition

        recovered_s = await until_answered(client, limit_s=5)
        assert (await http.get("/healthz")).status_code == 200
        assert (await hot_context(client))["degraded"] is False
    print(
        f"\nstalled: tool {tool_s * 1000:.0f} ms (deadline {DEADLINE_MS}), healthz "
        f"{health_s * 1000:.0f} ms, degraded hot context {hot_s * 1000:.0f} ms, known-down "
        f"call {known_down_s * 1000:.0f} ms; answered {recovered_s:.2f} s after thawing"
    )


async def test_after_a_restart_tools_and_subscriptions_come_back_by_themselves(
    own_postgres: OwnPostgres, demo_db: Database
) -> None:
    heard = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == HOT:
            heard.set()

    memory = CampaignMemory(demo_db, "demo")
    async with (
        serving(demo_db, auth=False) as base,
        mcp_client(f"{base}/c/demo/npc/ysolde/standard/mcp", message_handler=on_message) as client,
    ):
        with pytest.warns(MCPDeprecationWarning, match="resources/subscribe"):
            await client.subscribe_resource(HOT)
        await memory.log.append("s1", line("The bell is cracked."))
        with anyio.fail_after(10):
            await heard.wait()

        started = time.monotonic()
        await anyio.to_thread.run_sync(own_postgres.restart)
        restart_s = time.monotonic() - started
        recovered_s = await until_answered(client, limit_s=5)

        # Deaf until the change feed reconnects: each line written is a chance to be heard.
        started = time.monotonic()
        with anyio.fail_after(10):
            while True:
                heard = anyio.Event()
                with contextlib.suppress(Exception):
                    await memory.log.append("s1", line("Who rang it?"))
                with anyio.move_on_after(1):
                    await heard.wait()
                if heard.is_set():
                    break
        delivered_s = time.monotonic() - started
    print(
        f"\nrestart took {restart_s:.2f} s; tools answered {recovered_s:.2f} s and a "
        f"subscriber heard a new line {delivered_s:.2f} s after it"
    )
