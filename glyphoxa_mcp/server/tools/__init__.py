"""The four memory tools, registered under their canonical (dotted) names, each with an input
schema that refuses unknown argument names (checked, once, by server/argument_gate.py's
gate)."""

from __future__ import annotations

from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations

from glyphoxa_mcp.domain.tool_names import ToolName
from glyphoxa_mcp.server.tool_arguments import CheckedArguments, checked_tool, strict_arguments
from glyphoxa_mcp.server.tools import (
    get_session_summary,
    query_entities,
    search_facts,
    search_sessions,
)

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

TOOLS = (
    (
        ToolName.SEARCH_SESSIONS,
        search_sessions.search_sessions,
        "Search past sessions",
        search_sessions.DESCRIPTION,
    ),
    (
        ToolName.QUERY_ENTITIES,
        query_entities.query_entities,
        "Query the knowledge graph",
        query_entities.DESCRIPTION,
    ),
    (
        ToolName.GET_SESSION_SUMMARY,
        get_session_summary.get_session_summary,
        "Summary of a past session",
        get_session_summary.DESCRIPTION,
    ),
    (
        ToolName.SEARCH_FACTS,
        search_facts.search_facts,
        "Search facts and events",
        search_facts.DESCRIPTION,
    ),
)


# Each tool's arguments: the model the SDK builds from its signature, with unknown names refused.
ARGUMENTS: dict[str, CheckedArguments] = {
    name.value: strict_arguments(function) for name, function, _, _ in TOOLS
}


def memory_tools() -> list[Tool]:
    """The four tools, for MCPServer(tools=...), in this order."""
    return [
        checked_tool(
            function,
            ARGUMENTS[name.value],
            name.value,
            title=title,
            description=description,
            annotations=READ_ONLY,
        )
        for name, function, title, description in TOOLS
    ]
