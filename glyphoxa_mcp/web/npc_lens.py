"""The campaign as one NPC sees it: its hot context and what each memory tool answers it, asked
of the same MCP server its endpoint runs (its view, the tier's tools and limits), through an
in-memory client, so the page shows what the NPC's model would read. Only the deadline is
not the tier's: the DM looks at what the NPC knows, which a busy desk's timeout would hide."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent, TextResourceContents

from glyphoxa_mcp.app import App
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.tool_names import ToolName
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.resource_uris import hot_uri
from glyphoxa_mcp.server.state import ServerState

LOOKING_DEADLINE_MS = 30_000


@dataclass(frozen=True)
class Answer:
    tool: str
    arguments: dict[str, Any]
    text: str
    refused: bool


@dataclass(frozen=True)
class NpcLens:
    npc_id: str
    tier: Tier
    prompt: str
    """The hot context's prompt block; the whole context as JSON is `hot_json`."""
    hot_json: str
    answers: tuple[Answer, ...]


def tool_calls(query: str | None) -> list[tuple[ToolName, dict[str, Any]]]:
    """Each tool, asked the way a model would ask it about `query`."""
    calls: list[tuple[ToolName, dict[str, Any]]] = [(ToolName.GET_SESSION_SUMMARY, {})]
    if query:
        calls = [
            (ToolName.QUERY_ENTITIES, {"name": query}),
            (ToolName.SEARCH_SESSIONS, {"query": query}),
            (ToolName.SEARCH_FACTS, {"query": query}),
            *calls,
        ]
    return calls


def _readable(text: str) -> str:
    """JSON indented for reading; other text as it is."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


async def look_as(app: App, campaign: str, npc_id: str, tier: Tier, query: str | None) -> NpcLens:
    view = await app.view(campaign, npc_id)
    # The scope is built once per NPC (seconds at 10,000 entities), before the calls that
    # would otherwise spend their tier's deadline on it.
    await view.scope()
    server = build_server(ServerState(view, tier_policy(tier, LOOKING_DEADLINE_MS)))
    async with Client(server) as client:
        try:
            hot = await client.read_resource(hot_uri(npc_id))
        except MCPError as exc:  # the NPC's model would read this refusal instead
            hot_json: dict[str, Any] = {"error": str(exc)}
        else:
            [contents] = hot.contents
            text = contents.text if isinstance(contents, TextResourceContents) else "{}"
            hot_json = json.loads(text)
        answers = []
        for tool, arguments in tool_calls(query):
            result = await client.call_tool(tool.value, arguments)
            text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
            answers.append(Answer(tool.value, arguments, _readable(text), result.is_error))
    return NpcLens(
        npc_id=npc_id,
        tier=tier,
        prompt=str(hot_json.get("prompt") or hot_json.get("error", "")),
        hot_json=json.dumps(hot_json, indent=2, ensure_ascii=False),
        answers=tuple(answers),
    )
