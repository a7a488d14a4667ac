"""The four memory tools, registered under their canonical (dotted) names."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from glyphoxa_mcp.server.tool_names import ToolName
from glyphoxa_mcp.server.tools import (
    query_entities,
    search_facts,
    search_sessions,
    session_summary,
)

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def register_tools(server: MCPServer) -> None:
    server.add_tool(
        search_sessions.search_sessions,
        name=ToolName.SEARCH_SESSIONS.value,
        title="Search past sessions",
        description=search_sessions.DESCRIPTION,
        annotations=READ_ONLY,
    )
    server.add_tool(
        query_entities.query_entities,
        name=ToolName.QUERY_ENTITIES.value,
        title="Query the knowledge graph",
        description=query_entities.DESCRIPTION,
        annotations=READ_ONLY,
    )
    server.add_tool(
        session_summary.get_session_summary,
        name=ToolName.GET_SESSION_SUMMARY.value,
        title="Summary of a past session",
        description=session_summary.DESCRIPTION,
        annotations=READ_ONLY,
    )
    server.add_tool(
        search_facts.search_facts,
        name=ToolName.SEARCH_FACTS.value,
        title="Search facts and events",
        description=search_facts.DESCRIPTION,
        annotations=READ_ONLY,
    )
