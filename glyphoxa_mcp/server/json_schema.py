"""Rewriting the JSON Schemas pydantic makes for the tools, without changing what they accept:
`$ref`s inlined (for clients that take none, and for quicker checking), and nullable values
written the way a client takes them."""

from __future__ import annotations

from typing import Any

REFERENCE = "#/$defs/"
# Keywords after which a null is no longer valid for every type: a nullable one of these
# stays an anyOf.
_NOT_NULL_SAFE = frozenset({"enum", "const", "$ref", "anyOf", "oneOf", "allOf", "not"})


class SelfReference(ValueError):
    """A definition that refers to itself, or to one not in the schema: not inlinable."""


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every `$ref` into its `$defs` replaced by the definition (beside the
    referring node's other keywords), and no `$defs`."""
    definitions = schema.get("$defs", {})

    def inline(node: Any, expanding: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(item, expanding) for item in node]
        if not isinstance(node, dict):
            return node
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith(REFERENCE):
            name = reference.removeprefix(REFERENCE)
            if name in expanding or name not in definitions:
                raise SelfReference(f"cannot inline {reference!r}")
            inlined = inline(definitions[name], (*expanding, name))
            return inlined | {k: inline(v, expanding) for k, v in node.items() if k != "$ref"}
        return {k: inline(v, expanding) for k, v in node.items() if k != "$defs"}

    inlined: dict[str, Any] = inline(schema, ())
    return inlined


def plain_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The same JSON Schema, quicker to check: `$ref`s inlined, and a nullable
    `anyOf: [X, {"type": "null"}]` written as X with `type: [X's type, "null"]` where X
    has no keyword that a null would fail. A client validates every structured result
    against its tool's output schema (the reference SDK with `jsonschema`, where each
    `$ref` is a lookup and each `anyOf` a try): 2.4 ms for a query_entities result, 1.5
    written so. A schema whose definitions refer to themselves is left as it is."""

    def plain(node: Any) -> Any:
        if isinstance(node, list):
            return [plain(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {k: plain(v) for k, v in node.items()}
        options = out.get("anyOf")
        if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
            other = next(o for o in options if o != {"type": "null"})
            if isinstance(other.get("type"), str) and not _NOT_NULL_SAFE & other.keys():
                del out["anyOf"]
                return other | out | {"type": [other["type"], "null"]}
        return out

    try:
        inlined = inline_refs(schema)
    except SelfReference:
        return schema
    flat: dict[str, Any] = plain(inlined)
    return flat
