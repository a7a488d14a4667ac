"""The tier gate: MCP middleware that applies a tier and a name style to every request.

- `tools/list` shows only the tier's tools, under the advertised spelling;
- `tools/call` accepts either spelling, refuses a tool the tier hides with an error that says
  so, and cancels a call that runs past the tier's deadline, answering with an error.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from glyphoxa_mcp.server.client_logging import ClientLogging
from glyphoxa_mcp.server.tiers import TierPolicy
from glyphoxa_mcp.server.tool_names import NameStyle, advertised, canonical

log = logging.getLogger(__name__)


def tool_error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


class TierGate:
    def __init__(
        self, policy: TierPolicy, style: NameStyle, client_logging: ClientLogging | None = None
    ) -> None:
        self.policy = policy
        self.style = style
        self.client_logging = client_logging or ClientLogging()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "tools/list":
            return self._listed(await call_next(ctx))
        if ctx.method == "tools/call" and isinstance(ctx.params, dict):
            tool = canonical(str(ctx.params.get("name", "")))
            if tool is not None:
                if not self.policy.allows(tool):
                    return tool_error(self.policy.refusal(tool))
                renamed = dataclasses.replace(ctx, params={**ctx.params, "name": tool.value})
                return await self._within_deadline(tool.value, renamed, call_next)
        return await call_next(ctx)

    async def _within_deadline(
        self, name: str, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        deadline_s = self.policy.deadline_ms / 1000
        with anyio.move_on_after(deadline_s) as scope:
            return await call_next(ctx)
        log.warning("%s passed the %s deadline and was cancelled", name, self.policy.tier.value)
        assert scope.cancelled_caught
        message = (
            f"{name} took longer than the {self.policy.tier.value} tier's deadline of "
            f"{self.policy.deadline_ms} ms and was cancelled. Ask for fewer results, or use a "
            "deeper tier."
        )
        await self.client_logging.send(ctx.session, "warning", message, ctx.request_id)
        return tool_error(message)

    def _listed(self, result: HandlerResult) -> HandlerResult:
        def shown(name: str) -> str | None:
            tool = canonical(name)
            if tool is None:
                return name
            return advertised(tool, self.style) if self.policy.allows(tool) else None

        return relisted(result, shown)


def relisted(result: HandlerResult, shown: Callable[[str], str | None]) -> HandlerResult:
    """A tools/list result with each tool under the name `shown` gives it (None: left out)."""
    listing = result.model_dump(by_alias=True) if isinstance(result, BaseModel) else result
    if not isinstance(listing, dict):
        return result
    tools = []
    for entry in listing.get("tools", []):
        name = shown(entry.get("name", ""))
        if name is not None:
            tools.append({**entry, "name": name})
    return {**listing, "tools": tools}
