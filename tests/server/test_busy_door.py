"""Busy said at the HTTP door: a tool call admission control would refuse on arrival is
answered before the MCP layers, as the tier gate would answer it, to real clients of both
protocol generations; a call that may be admitted goes on to the gate."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from httpx2 import AsyncClient as McpHttpClient
from mcp import types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.server.admission import Admission
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from tests.server.http_serving import load_demo, serving
from tests.server.test_session_caps import INITIALIZE

pytestmark = pytest.mark.e2e

TOOL = "memory.query_entities"
PATH = "/c/demo/npc/ysolde/standard/mcp"


@pytest.fixture
def db(db256: Database) -> Database:
    return db256


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def full(admission: Admission, clock: Clock) -> AsyncIterator[None]:
    """The only place taken by a call measured, like every call of the tool, at 600 ms of
    the STANDARD tier's 1 s: a second call cannot be answered in time."""
    for _ in range(40):
        async with admission.admitted(TOOL, Tier.STANDARD, 1.0):
            clock.now += 0.6
    release = anyio.Event()
    async with anyio.create_task_group() as tasks:

        async def hold() -> None:
            async with admission.admitted(TOOL, Tier.STANDARD, 1.0):
                await release.wait()

        tasks.start_soon(hold)
        while not admission.running:
            await anyio.sleep(0.001)
        yield
        release.set()


async def test_a_call_refused_on_arrival_is_answered_at_the_door_in_plain_json(
    db: Database,
) -> None:
    await load_demo(db)
    _, token = await AccessTokens(db).create(Viewer.npc("demo", "ysolde"))
    headers = {
        "authorization": f"Bearer {token.token}",
        "accept": "application/json, text/event-stream",
    }
    clock = Clock()
    admission = Admission(1, clock=clock)
    policies = {tier: tier_policy(tier, 1000 if tier is Tier.STANDARD else 4000) for tier in Tier}
    async with (
        serving(db, policies=policies, admission=admission) as base,
        httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as http,
    ):
        opened = await http.post(PATH, json=INITIALIZE)
        session = {
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-06-18",
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post(PATH, json=initialized, headers=session)
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": TOOL, "arguments": {"name": "Berrit"}},
        }
        admitted = await http.post(PATH, json=call, headers=session)
        async with full(admission, clock):
            refused_before = admission.refused_at_once
            refused = await http.post(PATH, json=call, headers=session)
            assert admission.refused_at_once == refused_before + 1
    # The SDK's answers and the door's alike are one JSON body.
    assert admitted.headers["content-type"] == "application/json"
    assert admitted.json()["id"] == 7 and not admitted.json()["result"]["isError"]
    assert refused.status_code == 200
    assert refused.headers["content-type"] == "application/json"
    answer = refused.json()
    assert (answer["jsonrpc"], answer["id"], answer["result"]["isError"]) == ("2.0", 7, True)
    [text] = [block["text"] for block in answer["result"]["content"]]
    assert text.startswith(f"{TOOL}: memory is busy and cannot answer within the STANDARD")
    assert "nothing was run. Retry after" in text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_clients_of_both_protocols_read_the_door_s_refusal_as_the_tool_s_answer(
    db: Database, mode: str
) -> None:
    await load_demo(db)
    _, token = await AccessTokens(db).create(Viewer.npc("demo", "ysolde"))
    clock = Clock()
    admission = Admission(1, clock=clock)
    policies = {tier: tier_policy(tier, 1000 if tier is Tier.STANDARD else 4000) for tier in Tier}
    async with serving(db, policies=policies, admission=admission) as base:
        http = McpHttpClient(headers={"Authorization": f"Bearer {token.token}"}, timeout=30)
        transport = streamable_http_client(f"{base}{PATH}", http_client=http)
        with anyio.fail_after(30):
            async with http, Client(transport, mode=mode) as client:  # type: ignore[arg-type]
                answered = await client.call_tool(TOOL, {"name": "Berrit"})
                async with full(admission, clock):
                    refused = await client.call_tool(TOOL, {"name": "Berrit"})
                again = await client.call_tool(TOOL, {"name": "Berrit"})
    assert not answered.is_error and not again.is_error
    assert refused.is_error
    assert "memory is busy" in refused.content[0].text  # type: ignore[union-attr]


async def test_a_call_past_its_deadline_is_told_to_an_http_client_on_its_own_stream(
    db: Database,
) -> None:
    """Answers are one JSON body, with no stream of their own: the warning beside a call
    cancelled at its deadline reaches the client all the same."""
    await load_demo(db)
    _, token = await AccessTokens(db).create(Viewer.npc("demo", "ysolde"))
    heard: list[types.LoggingMessageNotificationParams] = []
    warned = anyio.Event()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(params)
        warned.set()

    # No call is answered within a millisecond: the first is admitted (nothing is measured
    # yet) and cancelled at the deadline.
    policies = {tier: tier_policy(tier, 1 if tier is Tier.STANDARD else 4000) for tier in Tier}
    async with serving(db, policies=policies) as base:
        http = McpHttpClient(headers={"Authorization": f"Bearer {token.token}"}, timeout=30)
        transport = streamable_http_client(f"{base}{PATH}", http_client=http)
        with anyio.fail_after(30):
            async with (
                http,
                Client(transport, mode="legacy", logging_callback=on_log) as client,  # type: ignore[arg-type]
            ):
                with pytest.warns(MCPDeprecationWarning):
                    await client.set_logging_level("warning")
                late = await client.call_tool(TOOL, {"name": "Berrit"})
                await warned.wait()
    assert late.is_error
    assert [h.level for h in heard] == ["warning"]
    assert str(heard[0].data) == late.content[0].text  # type: ignore[union-attr]
