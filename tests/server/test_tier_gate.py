"""The tier gate through real in-memory MCP clients, on both protocol generations.

The tools here are small stand-ins registered under the real names, so the gate is tested on
its own; the memory tools themselves have their own tests.
"""

from __future__ import annotations

import anyio
import pytest
from mcp.client import Client
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from glyphoxa_mcp.db.guard import MemoryGuard
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.tool_names import NameStyle, ToolName
from glyphoxa_mcp.errors import DatabaseUnavailableError
from glyphoxa_mcp.server.state import tool_errors
from glyphoxa_mcp.server.tier_gate import TierGate
from tests.conftest import PostgresForTests

MODES = ["legacy", "auto"]


class Echo(BaseModel):
    tool: str
    value: int


def stand_in(name: str):
    async def respond(value: int, sleep_ms: int = 0) -> Echo:
        await anyio.sleep(sleep_ms / 1000)
        return Echo(tool=name, value=value)

    return respond


def make_server(tier: Tier, style: NameStyle, deadline_ms: int | None = None) -> MCPServer:
    server = MCPServer("gate-test", middleware=[TierGate(tier_policy(tier, deadline_ms), style)])
    for tool in ToolName:
        server.add_tool(stand_in(tool.value), name=tool.value, description=f"stand-in: {tool}")
    return server


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


async def listed(server: MCPServer, mode: str) -> list[str]:
    async with Client(server, mode=mode) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def test_fast_lists_only_query_entities(mode: str) -> None:
    assert await listed(make_server(Tier.FAST, NameStyle.DOTTED), mode) == ["memory.query_entities"]


@pytest.mark.parametrize("tier", [Tier.STANDARD, Tier.DEEP])
async def test_standard_and_deep_list_all_four(tier: Tier, mode: str) -> None:
    assert sorted(await listed(make_server(tier, NameStyle.DOTTED), mode)) == sorted(ToolName)


async def test_underscore_style_advertises_strict_names(mode: str) -> None:
    names = await listed(make_server(Tier.STANDARD, NameStyle.UNDERSCORE), mode)
    assert sorted(names) == sorted(tool.underscored for tool in ToolName)


@pytest.mark.parametrize("style", list(NameStyle))
async def test_calls_work_under_either_spelling_in_both_styles(style: NameStyle, mode: str) -> None:
    async with Client(make_server(Tier.STANDARD, style), mode=mode) as client:
        await client.list_tools()
        for name in ("memory.search_facts", "memory_search_facts"):
            result = await client.call_tool(name, {"value": 7})
            assert not result.is_error
            assert result.structured_content == {"tool": "memory.search_facts", "value": 7}


async def test_a_hidden_tool_is_refused_with_a_clear_error(mode: str) -> None:
    async with Client(make_server(Tier.FAST, NameStyle.DOTTED), mode=mode) as client:
        result = await client.call_tool("memory_search_sessions", {"value": 1})
    assert result.is_error
    text = result.content[0].text
    assert "memory.search_sessions is not available in the FAST tier" in text
    assert "memory.query_entities" in text


async def test_a_call_past_the_deadline_is_cancelled_and_the_server_keeps_serving(
    mode: str,
) -> None:
    server = make_server(Tier.FAST, NameStyle.DOTTED, deadline_ms=50)
    async with Client(server, mode=mode) as client:
        with anyio.fail_after(5):
            slow = await client.call_tool("memory.query_entities", {"value": 1, "sleep_ms": 3000})
        assert slow.is_error
        assert "deadline of 50 ms and was cancelled" in slow.content[0].text
        quick = await client.call_tool("memory.query_entities", {"value": 2})
        assert not quick.is_error and quick.structured_content["value"] == 2


async def test_past_the_deadline_with_every_connection_taken_the_answer_says_so_not_too_big(
    mode: str,
) -> None:
    overloaded = MemoryGuard(dsn="")
    overloaded.saturated = lambda: True
    gate = TierGate(tier_policy(Tier.FAST, 50), NameStyle.DOTTED, guard=overloaded)
    server = MCPServer("gate-test", middleware=[gate])
    server.add_tool(stand_in("q"), name=ToolName.QUERY_ENTITIES.value, description="stand-in")
    async with Client(server, mode=mode) as client:
        with anyio.fail_after(5):
            slow = await client.call_tool("memory.query_entities", {"value": 1, "sleep_ms": 3000})
    assert slow.is_error
    assert "with every database connection in use. Retry in a moment." in slow.content[0].text
    assert "deeper tier" not in slow.content[0].text


async def test_a_call_that_lost_its_connection_is_tried_once_more_when_the_database_answers(
    test_server: PostgresForTests,
) -> None:
    calls: list[int] = []

    async def flaky(value: int) -> Echo:
        calls.append(value)
        with tool_errors():
            if len(calls) == 1:  # a pooled connection the restart left dead
                raise DatabaseUnavailableError("Cannot search: the connection was closed.")
        return Echo(tool="q", value=value)

    guard = MemoryGuard(test_server.admin_dsn)  # answering
    gate = TierGate(tier_policy(Tier.STANDARD, 5_000), NameStyle.DOTTED, guard=guard)
    server = MCPServer("gate-test", middleware=[gate])
    server.add_tool(flaky, name=ToolName.QUERY_ENTITIES.value, description="stand-in")
    async with Client(server) as client:
        result = await client.call_tool("memory.query_entities", {"value": 7})
    assert not result.is_error and result.structured_content["value"] == 7
    assert calls == [7, 7]


async def test_names_that_are_not_ours_pass_through_to_the_sdk(mode: str) -> None:
    async with Client(make_server(Tier.DEEP, NameStyle.DOTTED), mode=mode) as client:
        result = await client.call_tool("memory.forget_everything", {})
    assert result.is_error and "forget_everything" in result.content[0].text


async def test_a_client_listening_at_warning_hears_of_a_cancelled_call_in_its_log() -> None:
    from mcp import types
    from mcp.shared.exceptions import MCPDeprecationWarning

    from glyphoxa_mcp.server.client_logging import ClientLogging

    heard: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(params)

    client_logging = ClientLogging()
    server = MCPServer(
        "gate-test",
        middleware=[TierGate(tier_policy(Tier.FAST, 50), NameStyle.DOTTED, client_logging)],
    )
    client_logging.attach(server)
    server.add_tool(stand_in("q"), name=ToolName.QUERY_ENTITIES.value, description="stand-in")
    async with Client(server, mode="legacy", logging_callback=on_log) as client:
        with pytest.warns(MCPDeprecationWarning):
            await client.set_logging_level("error")
        await client.call_tool("memory.query_entities", {"value": 1, "sleep_ms": 3000})
        assert heard == []  # below the level asked for
        with pytest.warns(MCPDeprecationWarning):
            await client.set_logging_level("info")
        await client.call_tool("memory.query_entities", {"value": 1, "sleep_ms": 3000})
    assert [h.level for h in heard] == ["warning"]
    assert "deadline of 50 ms" in str(heard[0].data)
