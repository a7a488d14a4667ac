"""One short JSON-RPC error for a message that is not JSON-RPC, before the SDK sees it.

The SDK's HTTP transports answer such a message with pydantic's whole report ("Validation
error: 4 validation errors for ..."): several lines, the sent values echoed, the library's
version in a URL. `EnvelopeCheck` reads each POSTed body first and answers a broken one
itself, in one line naming the field and the rule; a good one goes on to the SDK untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pydantic_core
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import BaseModel, ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from glyphoxa_mcp.domain.wording import rule_of

MAX_MESSAGE = 200


@dataclass(frozen=True)
class EnvelopeProblem:
    code: int
    message: str


def _model_meant(raw: dict[str, object]) -> type[BaseModel]:
    """The kind of message a JSON object was meant to be, by its keys."""
    if "method" in raw:
        return JSONRPCRequest if "id" in raw else JSONRPCNotification
    return JSONRPCError if "error" in raw else JSONRPCResponse


def envelope_problem(body: bytes) -> EnvelopeProblem | None:
    """What makes `body` not one JSON-RPC 2.0 message, or None when it is one. (pure)"""
    try:
        raw = pydantic_core.from_json(body)
    except ValueError:
        return EnvelopeProblem(PARSE_ERROR, "Parse error: the body is not JSON.")
    try:
        jsonrpc_message_adapter.validate_python(raw, by_name=False)
        return None
    except ValidationError:
        pass
    if not isinstance(raw, dict):
        return EnvelopeProblem(
            INVALID_REQUEST, "Invalid request: send one JSON-RPC 2.0 message, a JSON object."
        )
    model = _model_meant(raw)
    try:
        model.model_validate(raw, by_name=False)
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False, include_context=False)[0]
        field = ".".join(str(part) for part in error["loc"]) or "message"
        # pydantic's rule text names the rule, never the value sent; one line, bounded.
        rule = " ".join(rule_of(error).split())[:MAX_MESSAGE]
        return EnvelopeProblem(INVALID_REQUEST, f"Invalid request: {field}: {rule}.")
    return EnvelopeProblem(
        INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 request, notification or response."
    )


def error_response(problem: EnvelopeProblem) -> Response:
    body = JSONRPCError(
        jsonrpc="2.0", id=None, error=ErrorData(code=problem.code, message=problem.message)
    )
    return Response(
        body.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=400,
        media_type="application/json",
    )


class EnvelopeCheck:
    """ASGI middleware in front of an MCP server's endpoints: a POSTed JSON body that is not
    one JSON-RPC message is answered here (400, one JSON-RPC error). Bodies over the SDK's
    own size limit, and other content types, go on for the SDK to refuse."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        answer_early: Callable[[object, Scope], Response | None] | None = None,
    ) -> None:
        self.app = app
        # Given each well-formed message (parsed) and may answer it here instead of the SDK.
        self.answer_early = answer_early

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        read: list[Message] = []
        size, complete = 0, False
        while not complete and size <= DEFAULT_MAX_REQUEST_BODY_SIZE:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            complete = not message.get("more_body", False)
        if complete:
            body = b"".join(m.get("body", b"") for m in read)
            problem = envelope_problem(body)
            if problem is not None:
                await error_response(problem)(scope, receive, send)
                return
            if self.answer_early is not None:
                early = self.answer_early(pydantic_core.from_json(body), scope)
                if early is not None:
                    await early(scope, receive, send)
                    return

        async def replay() -> Message:
            return read.pop(0) if read else await receive()

        await self.app(scope, replay, send)


def _is_json(scope: Scope) -> bool:
    for key, value in scope["headers"]:
        if key == b"content-type":
            return bool(value.split(b";")[0].strip().lower() == b"application/json")
    return False
