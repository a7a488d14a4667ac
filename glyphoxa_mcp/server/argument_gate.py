"""The argument gate: MCP middleware that checks what a caller sends before the SDK reads it.

- `tools/call` of a memory tool: the arguments are validated against the tool's own argument
  model with unknown names refused (server/tool_arguments.py; the input schema says
  `additionalProperties: false`);
- `resources/read`: the URI must name one of this server's resources, with parameters
  within their bounds (server/resource_uris.py); a URI naming none is the spec's
  resource-not-found error;
- `subscriptions/listen`: only this server's resources, and not too many.

Every refusal names the field and the rule it broke, in at most 1 kB (server/refusals.py);
error answers from further in are cut to 1 kB too. The SDK's own validation messages
(pydantic's, several lines each, with the input in them) never reach a caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from glyphoxa_mcp.server.refusals import fit, refusal
from glyphoxa_mcp.server.resource_uris import answered, resource_kind, subscribable
from glyphoxa_mcp.server.tool_arguments import CheckedArguments, checked
from glyphoxa_mcp.server.wire import as_wire, is_error, tool_error


def _capped(result: HandlerResult) -> HandlerResult:
    """An error result's text cut to 1 kB; other results as they are."""
    if not is_error(result):
        return result
    result = as_wire(result)
    assert isinstance(result, dict)
    content = [
        {**block, "text": fit(block["text"])}
        if isinstance(block, dict) and isinstance(block.get("text"), str)
        else block
        for block in result.get("content") or []
    ]
    return {**result, "content": content}


class ArgumentGate:
    """Checks tool arguments (of the tools in `tools`: name -> strict argument model, see
    `strict_arguments`) and resource URIs before anything else reads them. Arguments are
    validated here, once: the SDK takes what was validated rather than validating again."""

    def __init__(self, tools: Mapping[str, CheckedArguments], max_listened: int = 200) -> None:
        self.tools = tools
        self.max_listened = max_listened

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        if ctx.method == "tools/call":
            arguments = self.tools.get(str(params.get("name", "")))
            if arguments is None:
                return await call_next(ctx)
            return await self._call(str(params["name"]), arguments, params, ctx, call_next)
        if ctx.method == "resources/read" and isinstance(params.get("uri"), str):
            return await self._read(str(params["uri"]), ctx, call_next)
        if ctx.method == "subscriptions/listen":
            self._check_listen(params, ctx.protocol_version)
        return await call_next(ctx)

    async def _call(
        self,
        name: str,
        arguments: CheckedArguments,
        params: Mapping[str, Any],
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        values = params.get("arguments")
        if values is None:
            values = {}
        if not isinstance(values, dict):
            return tool_error(f"Invalid arguments for {name}: arguments must be an object.")
        validated, problems = checked(arguments, values)
        if problems or validated is None:
            return tool_error(refusal(f"Invalid arguments for {name}", problems))
        with arguments.passed(values, validated):
            return _capped(await call_next(ctx))

    async def _read(
        self, uri: str, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        try:
            resource_kind(uri)
            return await call_next(ctx)
        except MCPError as exc:
            raise answered(exc, ctx.protocol_version, uri) from None

    def _check_listen(self, params: Mapping[str, Any], protocol_version: str | None) -> None:
        wanted = params.get("notifications")
        uris = wanted.get("resourceSubscriptions") if isinstance(wanted, Mapping) else None
        if not isinstance(uris, list):
            return
        if len(uris) > self.max_listened:
            raise MCPError(
                INVALID_PARAMS,
                f"resourceSubscriptions must list at most {self.max_listened} URIs.",
            )
        for uri in uris:
            if isinstance(uri, str):
                try:
                    subscribable(uri)
                except MCPError as exc:
                    raise answered(exc, protocol_version, None) from None
