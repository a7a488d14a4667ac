"""The tier gate: MCP middleware that applies a tier and a name style to every request.

- `tools/list` shows only the tier's tools, under the advertised spelling;
- `tools/call` accepts either spelling, refuses a tool the tier hides with an error that says
  so, and answers within the tier's deadline: a call still running then is cancelled, and
  the answer says whether memory is unavailable (the database stopped answering) or the
  call itself was too slow;
- every call and resource read is counted for /metrics when metrics are kept.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from glyphoxa_mcp.db.guard import (
    UNAVAILABLE,
    DeadlineExceeded,
    MemoryBusy,
    MemoryGuard,
    MemoryUnavailableError,
)
from glyphoxa_mcp.server.client_logging import ClientLogging
from glyphoxa_mcp.server.metrics import Metrics, Outcome
from glyphoxa_mcp.server.tiers import TierPolicy
from glyphoxa_mcp.server.tool_names import NameStyle, advertised, canonical
from glyphoxa_mcp.server.wire import is_error, texts

log = logging.getLogger(__name__)


def tool_error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def is_unavailable(result: HandlerResult) -> bool:
    """Whether a tool's answer is the one every lost database connection gets."""
    return is_error(result) and any(UNAVAILABLE in text for text in texts(result))


def _outcome(result: HandlerResult) -> Outcome:
    return Outcome.ERROR if is_error(result) else Outcome.OK


def resource_name(uri: str) -> str:
    """A resource URI's kind (hot, prefetch, npcs, vocabulary), bounded for metric labels."""
    path = uri.split("?", 1)[0].rstrip("/")
    last = path.rsplit("/", 1)[-1]
    return last if last in ("hot", "prefetch", "npcs", "vocabulary") else "other"


class TierGate:
    def __init__(
        self,
        policy: TierPolicy,
        style: NameStyle,
        client_logging: ClientLogging | None = None,
        *,
        guard: MemoryGuard | None = None,
        metrics: Metrics | None = None,
        campaign: str = "",
    ) -> None:
        self.policy = policy
        self.style = style
        self.client_logging = client_logging or ClientLogging()
        # Unwatched (a server without a host watching its database): deadlines only.
        self.guard = guard or MemoryGuard(dsn="")
        self.metrics = metrics
        self.campaign = campaign

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "tools/list":
            return self._listed(await call_next(ctx))
        if ctx.method == "tools/call" and isinstance(ctx.params, dict):
            tool = canonical(str(ctx.params.get("name", "")))
            if tool is not None:
                started = time.perf_counter()
                if not self.policy.allows(tool):
                    self._observe("tool", tool.value, started, Outcome.REFUSED)
                    return tool_error(self.policy.refusal(tool))
                renamed = dataclasses.replace(ctx, params={**ctx.params, "name": tool.value})
                result, outcome = await self._within_deadline(tool.value, renamed, call_next)
                self._observe("tool", tool.value, started, outcome)
                return result
        if ctx.method == "resources/read" and isinstance(ctx.params, dict):
            return await self._read(ctx, call_next)
        return await call_next(ctx)

    async def _read(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        name = resource_name(str(ctx.params.get("uri", "") if ctx.params else ""))
        started = time.perf_counter()
        try:
            result = await call_next(ctx)
        except Exception:
            self._observe("resource", name, started, Outcome.ERROR)
            raise
        self._observe("resource", name, started, Outcome.OK)
        return result

    def _observe(self, kind: str, name: str, started: float, outcome: Outcome) -> None:
        if self.metrics is not None:
            seconds = time.perf_counter() - started
            tier = self.policy.tier.value
            self.metrics.observe(kind, name, tier, self.campaign, seconds, outcome)

    async def _within_deadline(
        self, name: str, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> tuple[HandlerResult, Outcome]:
        try:
            result = await self.guard.within(
                self.policy.deadline_ms / 1000, lambda: call_next(ctx), lost=is_unavailable
            )
            return result, _outcome(result)
        except MemoryUnavailableError:
            message = f"{name}: {UNAVAILABLE}"
            outcome = Outcome.UNAVAILABLE
        except MemoryBusy:
            message = (
                f"{name}: memory is busy (every database connection is in use) and the call "
                f"was cancelled at the {self.policy.tier.value} tier's deadline of "
                f"{self.policy.deadline_ms} ms. Try again in a moment."
            )
            outcome = Outcome.BUSY
        except DeadlineExceeded:
            log.warning("%s passed the %s deadline and was cancelled", name, self.policy.tier.value)
            message = (
                f"{name} took longer than the {self.policy.tier.value} tier's deadline of "
                f"{self.policy.deadline_ms} ms and was cancelled. Ask for fewer results, or use "
                "a deeper tier."
            )
            outcome = Outcome.DEADLINE
        await self.client_logging.send(ctx.session, "warning", message, ctx.request_id)
        return tool_error(message), outcome

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
