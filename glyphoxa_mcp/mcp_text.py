"""The text of what an MCP server answered, for the clients in this package (the demo, the
bench, the evaluation, the voice bridge). (pure)"""

from __future__ import annotations

from collections.abc import Sequence

from mcp.types import TextContent, TextResourceContents


def text_of(blocks: Sequence[object]) -> str:
    """The text blocks of a tool result or resource read, joined; other kinds are left out."""
    return "\n".join(
        block.text for block in blocks if isinstance(block, TextContent | TextResourceContents)
    ).strip()
