"""Structured tool results' text blocks, through real in-memory MCP clients."""

from __future__ import annotations

import json

import pytest
from mcp.client import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from glyphoxa_mcp.domain.tool_names import ToolName
from glyphoxa_mcp.server.compact_text import compact_tool_text
from tests.server.conftest import Connect, call

MODES = ["legacy", "auto"]


class Found(BaseModel):
    names: list[str]
    detail: dict[str, int]


def make_server() -> MCPServer:
    server = MCPServer("compact-test", middleware=[compact_tool_text])

    async def structured(count: int) -> Found:
        return Found(names=[f"name {n}" for n in range(count)], detail={"count": count})

    async def plain(words: str) -> str:
        return f"you said:\n  {words}"

    async def failing() -> Found:
        raise ToolError("nothing to find")

    server.add_tool(structured, name=ToolName.QUERY_ENTITIES.value)
    server.add_tool(plain, name="plain")
    server.add_tool(failing, name=ToolName.SEARCH_FACTS.value)
    server.add_tool(structured, name="someone_elses")
    return server


@pytest.mark.parametrize("mode", MODES)
async def test_the_text_block_is_the_structured_content_without_indentation(mode: str) -> None:
    async with Client(make_server(), mode=mode) as client:
        result = await client.call_tool(ToolName.QUERY_ENTITIES.value, {"count": 3})
        other = await client.call_tool("someone_elses", {"count": 3})
    [block] = result.content
    assert json.loads(block.text) == result.structured_content
    assert block.text == json.dumps(result.structured_content, separators=(",", ":"))
    assert other.content[0].text.startswith('{\n  "names"')  # not one of ours: as it was


@pytest.mark.parametrize("mode", MODES)
async def test_a_string_and_an_error_keep_their_text(mode: str) -> None:
    async with Client(make_server(), mode=mode) as client:
        plain = await client.call_tool("plain", {"words": "hello"})
        failed = await client.call_tool(ToolName.SEARCH_FACTS.value, {})
    assert plain.content[0].text == "you said:\n  hello"
    assert failed.is_error and "nothing to find" in failed.content[0].text


async def test_the_memory_tools_answer_in_compact_json(connect: Connect) -> None:
    async with connect() as client:
        result = await client.call_tool("memory.query_entities", {"type": "npc"})
        structured = await call(client, "memory.query_entities", type="npc")
    text = result.content[0].text
    assert json.loads(text) == structured and "\n" not in text
