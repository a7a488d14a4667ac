"""A tool's arguments: the model the SDK builds from the tool function's signature, with
unknown names refused; validated once per call (by the argument gate, whose result the
SDK's tool runner takes); and everything wrong with what a caller sent, in words.

Every problem is named by its field and the rule it broke, never with pydantic's own
messages (several lines each, with the input in them).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

import annotated_types
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.context_injection import find_context_parameter
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata, func_metadata
from pydantic import ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from glyphoxa_mcp.server.json_schema import plain_schema
from glyphoxa_mcp.server.refusals import NUL, unknown_name


class _Forbidding(ArgModelBase):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


@dataclass(frozen=True)
class _Checked:
    """Arguments the argument gate validated for the call under way."""

    arguments: CheckedArguments
    sent: Mapping[str, Any]
    values: dict[str, Any]


# Set by the argument gate around the call it passed; read back by the SDK's tool runner.
_CHECKED: ContextVar[_Checked | None] = ContextVar("glyphoxa_checked_arguments", default=None)


class CheckedArguments(FuncMetadata):
    """A tool's argument model (the SDK's, built from its signature, unknown names refused)
    whose arguments are validated once per call: by the argument gate, which hands the
    result on (`passed`) to the SDK. The SDK's tool runner calls `validate_arguments` on
    every call; for the arguments the gate passed, it is given what the gate validated
    instead of validating them a second time. Called without the gate (a server built
    without it, or arguments that differ from those the gate saw), it validates as the
    SDK does."""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        checked = _CHECKED.get()
        if checked is None or checked.arguments is not self:
            return self.validated(arguments_to_validate)
        if checked.sent != arguments_to_validate:
            return self.validated(arguments_to_validate)
        return dict(checked.values)

    def validated(self, sent: Mapping[str, Any]) -> dict[str, Any]:
        """`sent` validated into the tool function's keyword arguments (raises pydantic's
        ValidationError)."""
        return super().validate_arguments(dict(sent))

    @contextlib.contextmanager
    def passed(self, sent: Mapping[str, Any], values: dict[str, Any]) -> Iterator[None]:
        """While the block runs, the SDK takes `values` as the validated `sent`."""
        token = _CHECKED.set(_Checked(self, sent, values))
        try:
            yield
        finally:
            _CHECKED.reset(token)


def strict_arguments(function: Callable[..., Any]) -> CheckedArguments:
    """The SDK's argument model of a tool function, with unknown argument names refused."""
    context = find_context_parameter(function)
    metadata = func_metadata(function, skip_names=[context] if context else [])
    model: type[ArgModelBase] = create_model(
        metadata.arg_model.__name__, __base__=(metadata.arg_model, _Forbidding)
    )
    kept = {name: getattr(metadata, name) for name in FuncMetadata.model_fields}
    if metadata.output_schema is not None:
        kept["output_schema"] = plain_schema(metadata.output_schema)
    return CheckedArguments(**{**kept, "arg_model": model})


def checked_tool(
    function: Callable[..., Any], arguments: CheckedArguments, name: str, **details: Any
) -> Tool:
    """`function` as the tool `name` under `arguments` (its `strict_arguments`), so its input
    schema refuses unknown names as the ArgumentGate does: for MCPServer(tools=...), which
    takes tools built outside it (its add_tool builds its own from the function)."""
    tool = Tool.from_function(function, name=name, **details)
    return tool.model_copy(update={"fn_metadata": arguments, "parameters": input_schema(arguments)})


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


def checked(
    arguments: CheckedArguments, values: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, list[str]]:
    """`values` validated as arguments of a tool, once: the tool function's keyword
    arguments (None when pydantic refused them), and everything wrong with them, one
    sentence each (none: they may be passed on)."""
    fields = arguments.arg_model.model_fields
    found: dict[str, str] = {}
    validated = None
    try:
        validated = arguments.validated(values)
    except ValidationError as exc:
        for error in exc.errors(include_url=False, include_input=False):
            name, problem = _problem(error, fields)
            found.setdefault(name, problem)
    for name, value in values.items():
        if name in fields and name not in found and isinstance(value, str) and NUL in value:
            found[name] = f"{name} must not contain NUL characters"
    return validated, list(found.values())


def argument_problems(arguments: CheckedArguments, values: Mapping[str, Any]) -> list[str]:
    """Everything wrong with `values` as arguments of a tool, one sentence each."""
    return checked(arguments, values)[1]
