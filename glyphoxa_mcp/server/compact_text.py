"""MCP middleware: a structured tool result's text block as compact JSON.

A tool with an output schema answers twice, as structured content and, for clients that
read only text, as a text block of the same JSON. The SDK indents that copy by two spaces:
for a query_entities result 22.8 KB of text beside 13.9 KB of structured content, read by
the model that gets the text block (most clients hand it that) as tokens of indentation,
and sent down the pipe besides. The text block of the memory tools (each returns one
model, so their text block is that model's JSON) is here the structured content itself,
without the indentation. Other tools are left alone: the SDK writes a plain string
returned by a tool as text and wraps it in the structured content.
"""

from __future__ import annotations

from typing import Any

import pydantic_core
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from glyphoxa_mcp.domain.tool_names import canonical


async def compact_tool_text(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    result = await call_next(ctx)
    # Below the middleware the SDK has already dumped the result to its wire form.
    if (
        ctx.method != "tools/call"
        or not isinstance(ctx.params, dict)
        or canonical(str(ctx.params.get("name", ""))) is None
        or not isinstance(result, dict)
        or result.get("isError")
    ):
        return result
    structured, content = result.get("structuredContent"), result.get("content")
    if structured is None or not isinstance(content, list) or len(content) != 1:
        return result
    [block] = content
    if not isinstance(block, dict) or block.get("type") != "text":
        return result
    text = pydantic_core.to_json(structured).decode()
    return {**result, "content": [{**block, "text": text}]}
