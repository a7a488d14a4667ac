"""The argument gate: MCP middleware that checks what a caller sends before the SDK reads it.

- `tools/call` of a memory tool: the arguments are validated against the tool's own argument
  model with unknown names refused (the input schema says `additionalProperties: false`);
- `resources/read`: the URI must name one of this server's resources, with parameters
  within their bounds; a URI naming none is the spec's resource-not-found error;
- `subscriptions/listen`: only this server's resources, and not too many.

Every refusal names the field and the rule it broke, in at most 1 kB, repeating at most a
short prefix of what was sent; error answers from further in are cut to 1 kB too. The
SDK's own validation messages (pydantic's, several lines each, with the input in them)
never reach a caller.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin
from urllib.parse import parse_qsl

import annotated_types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.context_injection import find_context_parameter
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata, func_metadata
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate
from mcp_types import INVALID_PARAMS
from pydantic import ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from glyphoxa_mcp.server.resources import (
    HOT_URI_TEMPLATE,
    NPCS_URI,
    PREFETCH_URI_TEMPLATE,
    RESOURCE_NOT_FOUND,
    VOCABULARY_URI,
)
from glyphoxa_mcp.server.tier_gate import tool_error
from glyphoxa_mcp.server.wire import as_wire, is_error
from glyphoxa_mcp.views.arguments import quoted
from glyphoxa_mcp.views.limits import MAX_ID, MAX_UTTERANCE

MAX_ANSWER = 1024  # bytes of an error message
MAX_PROBLEMS = 5  # problems listed in one answer
MAX_URI = 65_536  # the SDK's own limit for matching a template
# From this protocol on, an unknown resource is answered with INVALID_PARAMS (SEP-2164), and
# -32002 is retired.
INVALID_PARAMS_FOR_NOT_FOUND_SINCE = "2026-07-28"
NUL = "\x00"


def fit(text: str, limit: int = MAX_ANSWER) -> str:
    """`text`, cut to at most `limit` bytes of UTF-8."""
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[: limit - len("…".encode())].decode(errors="ignore") + "…"


# --- tools ------------------------------------------------------------------------------------


class _Forbidding(ArgModelBase):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


def strict_arguments(function: Callable[..., Any]) -> FuncMetadata:
    """The SDK's argument model of a tool function, with unknown argument names refused."""
    context = find_context_parameter(function)
    metadata = func_metadata(function, skip_names=[context] if context else [])
    model: type[ArgModelBase] = create_model(
        metadata.arg_model.__name__, __base__=(metadata.arg_model, _Forbidding)
    )
    return metadata.model_copy(update={"arg_model": model})


def add_checked_tool(
    server: MCPServer,
    function: Callable[..., Any],
    arguments: FuncMetadata,
    name: str,
    **details: Any,
) -> None:
    """Add `function` as the tool `name` under `arguments` (its `strict_arguments`), so its
    input schema refuses unknown names as the ArgumentGate does."""
    server.add_tool(function, name=name, **details)
    # MCPServer has no public way to add a Tool it did not build; its manager's is public.
    tool = server._tool_manager.get_tool(name)
    assert tool is not None
    tool.fn_metadata = arguments
    tool.parameters = input_schema(arguments)


def input_schema(arguments: FuncMetadata) -> dict[str, Any]:
    """The JSON schema of a tool's arguments, as the SDK would publish it."""
    return arguments.arg_model.model_json_schema(by_alias=True)


def _constraint(field: FieldInfo, kind: type[Any], attribute: str) -> Any:
    for item in field.metadata:
        if isinstance(item, kind):
            return getattr(item, attribute)
    return None


def _base_type(field: FieldInfo) -> Any:
    annotation = field.annotation
    if get_origin(annotation) in (Union, UnionType):
        options = [a for a in get_args(annotation) if a is not NoneType]
        return options[0] if len(options) == 1 else annotation
    return annotation


def rule(field: FieldInfo) -> str:
    """What a value of `field` must be, in words."""
    kind = _base_type(field)
    if kind is str:
        longest = _constraint(field, annotated_types.MaxLen, "max_length")
        return "text" + (f" of at most {longest} characters" if longest is not None else "")
    if kind is int:
        low = _constraint(field, annotated_types.Ge, "ge")
        high = _constraint(field, annotated_types.Le, "le")
        return f"an integer from {low} to {high}" if None not in (low, high) else "an integer"
    if isinstance(kind, type) and issubclass(kind, Enum):
        return "one of " + ", ".join(str(member.value) for member in kind)
    return f"a {getattr(kind, '__name__', 'value')}"


def unknown_name(name: str, known: list[str], what: str = "argument") -> str:
    """A refusal of an unknown name, with the likeliest meant one."""
    squashed = {re.sub(r"[^a-z0-9]", "", k.lower()): k for k in known}
    guess = squashed.get(re.sub(r"[^a-z0-9]", "", name.lower()))
    if guess is None:
        started = [k for k in known if name and k.startswith(name.lower())]
        close = started or difflib.get_close_matches(name[:64], known, n=1, cutoff=0.6)
        guess = close[0] if len(close) == 1 else None
    hint = f"did you mean {guess}?" if guess else f"known: {', '.join(known) or 'none'}"
    return f"unknown {what} {quoted(name)} ({hint})"


# What a value inside an argument (an item of a list, a key of an object) must be, by
# pydantic's error type; in our words, since pydantic's own repeat the input.
_EXPECTED = {
    "string_type": "text",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "datetime_type": "an ISO 8601 time",
    "datetime_parsing": "an ISO 8601 time",
    "datetime_from_date_parsing": "an ISO 8601 time",
    "timezone_aware": "a time with its UTC offset",
    "string_too_short": "not empty",
    "too_short": "not empty",
    "string_pattern_mismatch": "an id (letters, digits, - _ . :)",
    "enum": "one of the listed values",
    "literal_error": "one of the listed values",
}


def _path(loc: tuple[int | str, ...]) -> str:
    return str(loc[0]) + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])


def _nested_problem(error: ErrorDetails) -> str:
    """A problem inside an argument, named by its path (utterances[1].speaker_name)."""
    path, kind = _path(error["loc"]), error["type"]
    context = error.get("ctx") or {}
    if kind == "missing":
        return f"{path} is required"
    if kind == "extra_forbidden":
        return f"unknown field {path}"
    if kind in ("string_too_long", "too_long"):
        return f"{path} must be at most {context.get('max_length')} long"
    return f"{path} must be {_EXPECTED.get(kind, 'valid (' + kind.replace('_', ' ') + ')')}"


def _problem(error: ErrorDetails, fields: Mapping[str, FieldInfo]) -> tuple[str, str]:
    """(field, problem) for one pydantic error, in words and without the input."""
    name = str(error["loc"][0]) if error["loc"] else "arguments"
    kind = error["type"]
    field = fields.get(name)
    if field is not None and len(error["loc"]) > 1:
        return _path(error["loc"]), _nested_problem(error)
    if kind == "extra_forbidden" or field is None:
        return name, unknown_name(name, list(fields))
    context = error.get("ctx") or {}
    if kind == "missing":
        return name, f"{name} is required: {rule(field)}"
    if kind == "string_too_long":
        return name, f"{name} must be at most {context.get('max_length')} characters"
    if kind == "greater_than_equal":
        return name, f"{name} must be {context.get('ge')} or more"
    if kind == "less_than_equal":
        return name, f"{name} must be at most {context.get('le')}"
    return name, f"{name} must be {rule(field)}"


def argument_problems(arguments: FuncMetadata, values: Mapping[str, Any]) -> list[str]:
    """Everything wrong with `values` as arguments of a tool, one sentence each."""
    fields = arguments.arg_model.model_fields
    found: dict[str, str] = {}
    try:
        arguments.validate_arguments(dict(values))
    except ValidationError as exc:
        for error in exc.errors(include_url=False, include_input=False):
            name, problem = _problem(error, fields)
            found.setdefault(name, problem)
    for name, value in values.items():
        if name in fields and name not in found and isinstance(value, str) and NUL in value:
            found[name] = f"{name} must not contain NUL characters"
    return list(found.values())


def refusal(subject: str, problems: list[str]) -> str:
    shown = problems[:MAX_PROBLEMS]
    more = len(problems) - len(shown)
    listed = "; ".join(shown) + (f"; and {more} more" if more else "")
    return fit(f"{subject}: {listed}.")


# --- resources --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceShape:
    """One of this server's resources: a fixed URI, or a template whose parameters are text
    of at most so many characters."""

    kind: str
    uri: str | None = None
    template: UriTemplate | None = None
    parameters: Mapping[str, int] = dataclasses.field(default_factory=dict)
    query: tuple[str, ...] = ()

    def parameters_of(self, uri: str) -> dict[str, str] | None:
        if self.uri is not None:
            return {} if uri == self.uri else None
        assert self.template is not None
        found = self.template.match(uri)
        if found is None:
            return None
        return {name: v if isinstance(v, str) else ",".join(v) for name, v in found.items()}


RESOURCES = (
    ResourceShape("npcs", uri=NPCS_URI),
    ResourceShape("vocabulary", uri=VOCABULARY_URI),
    ResourceShape(
        "hot",
        template=UriTemplate.parse(HOT_URI_TEMPLATE),
        parameters={"npc_id": MAX_ID, "session": MAX_ID},
        query=("session",),
    ),
    ResourceShape(
        "prefetch",
        template=UriTemplate.parse(PREFETCH_URI_TEMPLATE),
        parameters={"npc_id": MAX_ID, "utterance": MAX_UTTERANCE},
        query=("utterance",),
    ),
)
LISTED = "glyphoxa://npcs lists the NPCs and the URI of each one's hot context"


def not_found_code(protocol_version: str | None) -> int:
    """The spec's resource-not-found code under a protocol version."""
    modern = protocol_version is not None and protocol_version >= (
        INVALID_PARAMS_FOR_NOT_FOUND_SINCE
    )
    return INVALID_PARAMS if modern else RESOURCE_NOT_FOUND


def _uri_data(uri: str) -> dict[str, str] | None:
    return {"uri": uri} if len(uri) <= 256 else None


def resource_kind(uri: str) -> str:
    """Which of this server's resources `uri` names ('hot', 'prefetch', 'npcs', 'vocabulary'),
    its parameters checked; otherwise an MCPError saying what is wrong (RESOURCE_NOT_FOUND for
    a URI that names none of them)."""
    if len(uri) > MAX_URI:
        raise MCPError(INVALID_PARAMS, f"uri must be at most {MAX_URI} characters.")
    for shape in RESOURCES:
        parameters = shape.parameters_of(uri)
        if parameters is None:
            continue
        problems = []
        for name, value in parameters.items():
            longest = shape.parameters.get(name, 0)
            if NUL in value:
                problems.append(f"{name} must not contain NUL characters")
            elif len(value) > longest:
                problems.append(f"{name} must be at most {longest} characters")
        query = uri.partition("?")[2].partition("#")[0]
        names = [k for k, _ in parse_qsl(query, keep_blank_values=True)]
        problems += [
            unknown_name(k, list(shape.query), "parameter")
            for k in dict.fromkeys(names)
            if k not in shape.query
        ]
        if problems:
            raise MCPError(
                INVALID_PARAMS, refusal(f"Invalid parameters in {quoted(uri)}", problems)
            )
        return shape.kind
    raise MCPError(
        RESOURCE_NOT_FOUND,
        fit(
            f"No resource at uri {quoted(uri)}: {LISTED}; glyphoxa://campaign/vocabulary lists "
            "the campaign's names."
        ),
        _uri_data(uri),
    )


def answered(error: MCPError, protocol_version: str | None, uri: str | None) -> MCPError:
    """A resource error as this connection's protocol spells it, cut to 1 kB."""
    code = error.code
    if code == RESOURCE_NOT_FOUND:
        code = not_found_code(protocol_version)
    data = error.data
    if uri is not None and (data is None or (isinstance(data, dict) and "uri" in data)):
        data = _uri_data(uri)
    return MCPError(code, fit(error.message), data)


# --- the middleware ---------------------------------------------------------------------------


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
    `strict_arguments`) and resource URIs before anything else reads them."""

    def __init__(self, tools: Mapping[str, FuncMetadata], max_listened: int = 200) -> None:
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
        arguments: FuncMetadata,
        params: Mapping[str, Any],
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        values = params.get("arguments")
        if values is None:
            values = {}
        if not isinstance(values, dict):
            return tool_error(f"Invalid arguments for {name}: arguments must be an object.")
        problems = argument_problems(arguments, values)
        if problems:
            return tool_error(refusal(f"Invalid arguments for {name}", problems))
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


SUBSCRIBABLE = ("hot", "vocabulary", "npcs")


def subscribable(uri: str) -> str:
    """The kind of resource `uri` names, when a client may subscribe to it; otherwise an
    MCPError saying why not."""
    kind = resource_kind(uri)
    if kind not in SUBSCRIBABLE:
        raise MCPError(
            INVALID_PARAMS,
            f"uri {quoted(uri)} cannot be subscribed to: subscribe to an NPC's hot context "
            f"(glyphoxa://npc/<npc_id>/hot), {VOCABULARY_URI} or {NPCS_URI}.",
        )
    return kind
