"""The tier gate: MCP middleware that applies a tier and a name style to every request.

- `tools/list` shows only the tier's tools, under the advertised spelling;
- `tools/call` accepts either spelling, refuses a tool the tier hides with an error that says
  so, passes admission control (a call that cannot be answered within the tier's deadline
  is told "busy, retry after N ms" at once; see server/admission.py) and answers within the
  deadline: a call still running then is cancelled;
- every failed call is answered with one typed outcome (unavailable, busy, deadline, bad
  argument, internal; errors.py, decided in server/outcomes.py), its sentence saying
  whether and when to retry: a tool's own error reaches the gate typed (server/state.py's
  `Failure`), never as text to parse;
- every call and resource read is counted for /metrics when metrics are kept.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from pydantic import BaseModel

from glyphoxa_mcp.db.guard import MemoryGuard
from glyphoxa_mcp.domain.tiers import TierPolicy
from glyphoxa_mcp.domain.tool_names import NameStyle, advertised, canonical
from glyphoxa_mcp.errors import (
    CallDeadlineError,
    DatabaseUnavailableError,
    DeadlineExceeded,
    GlyphoxaError,
    InternalError,
    InvalidInputError,
    MemoryBusyError,
    MemoryUnavailableError,
    NotFoundError,
)
from glyphoxa_mcp.server.admission import Admission, admission_for
from glyphoxa_mcp.server.arrival import seconds_since_arrival
from glyphoxa_mcp.server.busy_door import busy_message
from glyphoxa_mcp.server.client_logging import ClientLogging
from glyphoxa_mcp.server.metrics import Metrics, Outcome
from glyphoxa_mcp.server.outcomes import past_tier_deadline
from glyphoxa_mcp.server.resource_uris import metric_name
from glyphoxa_mcp.server.state import FAILURE, Failure
from glyphoxa_mcp.server.wire import is_error, texts, tool_error

log = logging.getLogger(__name__)


def outcome_of(error: GlyphoxaError | None) -> Outcome:
    """The metric reason of a tool's typed error."""
    if isinstance(error, MemoryUnavailableError | DatabaseUnavailableError):
        return Outcome.UNAVAILABLE
    if isinstance(error, MemoryBusyError):
        return Outcome.BUSY
    if isinstance(error, CallDeadlineError):
        return Outcome.DEADLINE
    if isinstance(error, InvalidInputError | NotFoundError):
        return Outcome.BAD_ARGUMENT
    return Outcome.INTERNAL if isinstance(error, InternalError) else Outcome.ERROR


def is_bare(result: HandlerResult, tool: str) -> bool:
    """The SDK's answer to a crash it caught itself: its prefix and nothing else."""
    return texts(result) == [f"Error executing tool {tool}"]


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
        admission: Admission | None = None,
    ) -> None:
        self.policy = policy
        self.style = style
        self.client_logging = client_logging or ClientLogging()
        # Unwatched (a server without a host watching its database): deadlines only.
        self.guard = guard or MemoryGuard(dsn="")
        self.metrics = metrics
        self.campaign = campaign
        # Shared by every server of a process when the host gives one.
        self.admission = admission or admission_for(metrics)

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
        name = metric_name(str(ctx.params.get("uri", "") if ctx.params else ""))
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
        policy = self.policy
        failure = Failure()
        reporting = FAILURE.set(failure)
        try:
            async with self.admission.admitted(
                name,
                policy.tier,
                policy.deadline_ms / 1000,
                waited_s=seconds_since_arrival(ctx.request),
            ) as ticket:
                left_s = ticket.remaining_s(self.admission.clock())
                result = await self.guard.within(
                    left_s,
                    lambda: call_next(ctx),
                    lost=lambda answer: is_error(answer) and failure.lost,
                )
        except MemoryBusyError as exc:
            error: GlyphoxaError = MemoryBusyError(
                exc.retry_after_ms,
                busy_message(name, policy, exc.retry_after_ms, exc.waited_ms),
                waited_ms=exc.waited_ms,
            )
        except MemoryUnavailableError as exc:
            error = exc
        except DeadlineExceeded as exc:
            if type(exc) is DeadlineExceeded:  # not the database's doing: the call's own size
                log.warning("%s passed the %s deadline and was cancelled", name, policy.tier.value)
            error = past_tier_deadline(exc, name, policy)
        else:
            if not is_error(result):
                return result, Outcome.OK
            if failure.error is not None:
                return result, outcome_of(failure.error)
            if is_bare(result, name):
                error = InternalError()
            else:  # refused before the tool ran: its arguments (ArgumentGate, the SDK)
                return result, Outcome.BAD_ARGUMENT
        finally:
            FAILURE.reset(reporting)
        message = error.message if error.message.startswith(name) else f"{name}: {error.message}"
        await self.client_logging.send(ctx.session, "warning", message)
        return tool_error(message), outcome_of(error)

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
