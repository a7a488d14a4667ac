"""Busy said at the HTTP door: a tool call that admission control would refuse on arrival is
answered before the MCP layers see it.

Under overload most calls a server answers are refusals, and a refusal that first passes the
SDK's transport, session and dispatch costs the one server process nearly what an answer
does: refusals then take the processor the admitted calls need, and arrive late themselves.
`BusyDoor` reads the JSON-RPC message `EnvelopeCheck` has already read and, for a
`tools/call` the endpoint's tier offers, asks admission control whether the call would be
refused now (`Admission.refused_on_arrival`); if so it answers with the tool result the tier
gate would have given (`isError`, the same sentence), as plain JSON. Anything else, or a
call that may be admitted, goes on untouched: the gate decides again.
"""

from __future__ import annotations

import time

import pydantic_core
from mcp.types import CallToolResult, TextContent
from starlette.responses import Response
from starlette.types import Scope

from glyphoxa_mcp.domain.tiers import TierPolicy
from glyphoxa_mcp.domain.tool_names import canonical
from glyphoxa_mcp.server.admission import Admission
from glyphoxa_mcp.server.arrival import seconds_since_arrival
from glyphoxa_mcp.server.metrics import Metrics, Outcome


def busy_message(
    tool: str, policy: TierPolicy, retry_after_ms: int, waited_ms: int | None = None
) -> str:
    """What a call refused as busy is told; `waited_ms` when it waited for a place first."""
    waited = "" if waited_ms is None else f"waited {waited_ms} ms for a place and "
    return (
        f"{tool}: memory is busy and {waited}cannot answer within the {policy.tier.value} "
        f"tier's deadline of {policy.deadline_ms} ms right now; nothing was run. "
        f"Retry after {retry_after_ms} ms."
    )


class BusyDoor:
    def __init__(
        self,
        admission: Admission,
        policy: TierPolicy,
        *,
        metrics: Metrics | None = None,
        campaign: str = "",
    ) -> None:
        self.admission = admission
        self.policy = policy
        self.metrics = metrics
        self.campaign = campaign

    def answer(self, message: object, scope: Scope) -> Response | None:
        """The busy answer to `message` (one parsed JSON-RPC message) if its call would be
        refused now; None to let it go on."""
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        if not isinstance(params, dict):
            return None
        tool = canonical(str(params.get("name", "")))
        if tool is None or not self.policy.allows(tool):
            return None
        started = time.perf_counter()
        retry_ms = self.admission.refused_on_arrival(
            tool.value,
            self.policy.tier,
            self.policy.deadline_ms / 1000,
            waited_s=seconds_since_arrival(scope),
        )
        if retry_ms is None:
            return None
        result = CallToolResult(
            content=[
                TextContent(type="text", text=busy_message(tool.value, self.policy, retry_ms))
            ],
            is_error=True,
        )
        body = {
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "result": result.model_dump(by_alias=True, exclude_none=True, mode="json"),
        }
        if self.metrics is not None:
            seconds = time.perf_counter() - started
            self.metrics.observe(
                "tool", tool.value, self.policy.tier.value, self.campaign, seconds, Outcome.BUSY
            )
        return Response(pydantic_core.to_json(body), media_type="application/json")
