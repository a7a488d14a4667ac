"""A tools/call result as middleware sees it: a CallToolResult from a middleware that answers
by itself, or the wire dict the SDK has already made of a tool's answer. (pure)"""

from __future__ import annotations

from typing import Any

from mcp.server.context import HandlerResult
from mcp.types import CallToolResult, TextContent


def tool_error(message: str) -> CallToolResult:
    """A tool's error result saying `message`."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def as_wire(result: HandlerResult) -> HandlerResult:
    """A CallToolResult as the dict the SDK sends; anything else as it is."""
    if isinstance(result, CallToolResult):
        dumped: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True)
        return dumped
    return result


def is_error(result: HandlerResult) -> bool:
    wire = as_wire(result)
    return isinstance(wire, dict) and bool(wire.get("isError"))


def texts(result: HandlerResult) -> list[str]:
    """The text blocks of a result."""
    wire = as_wire(result)
    if not isinstance(wire, dict):
        return []
    return [
        block["text"]
        for block in wire.get("content") or []
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]
