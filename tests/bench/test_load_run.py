"""How a load client tells a result, an error answer and a failed call apart, driven against a
small real MCP server in memory."""

from __future__ import annotations

import random
import time
from typing import Any

import anyio
from mcp.client import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from glyphoxa_mcp.bench.load import ERROR, EXCEPTION, OK, TOOL_MIX
from glyphoxa_mcp.bench.load_clients import Swarm
from glyphoxa_mcp.domain.tiers import Tier

QUERY, FACTS, SESSIONS, SUMMARY = list(TOOL_MIX)


def faulty_server() -> MCPServer:
    """query_entities and the summary answer; search_facts answers with an error;
    search_sessions fails with a protocol error (no result at all)."""
    server = MCPServer("faulty")

    @server.tool(name=QUERY)
    def query(name: str) -> str:
        return name

    @server.tool(name=SUMMARY)
    def summary(session_id: str = "", sessions_ago: int = 0) -> str:
        return "a quiet night"

    @server.tool(name=FACTS)
    def facts(query: str, top_k: int) -> str:
        raise ToolError("no facts today")

    @server.tool(name=SESSIONS)
    def sessions(query: str, top_k: int) -> str:
        raise MCPError(-32603, "the server broke")

    return server


ARGUMENTS: dict[str, Any] = {
    QUERY: ({"name": "Ysolde"},),
    SUMMARY: ({"sessions_ago": 1},),
    FACTS: ({"query": "bridge", "top_k": 5},),
    SESSIONS: ({"query": "bridge", "top_k": 5},),
}


async def test_results_error_answers_and_failed_calls_are_recorded_apart_until_time_is_up() -> None:
    swarm = Swarm(base="", tokens={}, clients=1)
    swarm.start.set()
    swarm.end = time.monotonic() + 0.3
    used = dict.fromkeys(TOOL_MIX, 0)
    with anyio.fail_after(10):
        async with Client(faulty_server()) as client:
            broke = await swarm.calls(client, random.Random(1), ARGUMENTS, used, Tier.STANDARD)
    assert broke is False  # a protocol error leaves the session usable
    outcomes = {(r.tool, r.outcome, r.message) for r in swarm.records}
    assert outcomes == {
        (QUERY, OK, None),
        (SUMMARY, OK, None),
        (FACTS, ERROR, "Error executing tool memory.search_facts: no facts today"),
        (SESSIONS, EXCEPTION, "MCPError: the server broke"),
    }
    assert sum(used.values()) == len(swarm.records)
    assert all(r.duration_ms > 0 for r in swarm.records)
    assert swarm.time_is_up()
