"""Tool definitions for every tier, in the form each kind of client takes them.

- MCP: the tools/list entries, canonical dotted names, with input and output schemas.
- OpenAI Realtime: the `session.update` -> `session.tools` array: underscore names, and
  parameters as plain JSON Schema with no `$ref` and no `anyOf`.
- Gemini Live: `tools[].function_declarations`: underscore names, and parameters in Gemini's
  OpenAPI 3.0 subset (upper-case types, `nullable`, no `$ref`, `anyOf` or `default`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.tool_names import NameStyle, advertised, canonical
from glyphoxa_mcp.server.json_schema import inline_refs
from glyphoxa_mcp.server.tools import memory_tools

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
GEMINI_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
MCP_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
GEMINI_KEYS = frozenset(
    {
        "type",
        "description",
        "enum",
        "properties",
        "required",
        "items",
        "nullable",
        "format",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
    }
)
OPENAI_FORBIDDEN = frozenset({"$ref", "$defs", "anyOf", "oneOf", "allOf"})
TARGETS = ("mcp.json", "openai_realtime.json", "gemini_live.json")


def flatten(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline `$ref`s, turn `anyOf: [X, null]` into X with `nullable`, and drop titles."""

    def flat(node: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title":
                continue
            if key == "anyOf":
                options = [o for o in value if o.get("type") != "null"]
                if len(options) != 1:
                    raise ValueError(f"cannot flatten a union of {len(options)} types: {value}")
                out |= flat(options[0])
                if len(options) < len(value):
                    out["nullable"] = True
            elif key == "properties":
                out[key] = {name: flat(prop) for name, prop in value.items()}
            elif key == "items" and isinstance(value, dict):
                out[key] = flat(value)
            else:
                out[key] = value
        return out

    return flat(inline_refs(schema))


def openai_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    def strip(node: dict[str, Any]) -> dict[str, Any]:
        # An optional argument is one the model leaves out: a null default on a string
        # property contradicts its type, and the Realtime API does not accept it.
        node = {
            k: v for k, v in node.items() if k != "nullable" and not (k == "default" and v is None)
        }
        if "properties" in node:
            node["properties"] = {n: strip(p) for n, p in node["properties"].items()}
        if isinstance(node.get("items"), dict):
            node["items"] = strip(node["items"])
        return node

    return strip(flatten(schema))


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    def convert(node: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "type":
                out["type"] = value.upper()
            elif key == "properties":
                out["properties"] = {n: convert(p) for n, p in value.items()}
            elif key == "items":
                out["items"] = convert(value)
            elif key in GEMINI_KEYS:
                out[key] = value
        if "default" in node and node["default"] is not None:
            out["description"] = f"{out.get('description', '')} Default: {node['default']}.".strip()
        return out

    return convert(flatten(schema))


async def tier_tools(tier: Tier) -> list[dict[str, Any]]:
    """The MCP tool entries a tier lists, as JSON, in registration order."""
    server = MCPServer("glyphoxa-memory", tools=memory_tools())
    policy = tier_policy(tier)
    tools = []
    for tool in await server.list_tools():
        name = canonical(tool.name)
        if name is not None and policy.allows(name):
            tools.append(tool.model_dump(mode="json", by_alias=True, exclude_none=True))
    return tools


async def render(tier: Tier) -> dict[str, Any]:
    """{file name: JSON document} for one tier."""
    tools = await tier_tools(tier)

    def spoken(tool: dict[str, Any]) -> str:
        found = canonical(tool["name"])
        assert found is not None
        return advertised(found, NameStyle.UNDERSCORE)

    return {
        "mcp.json": {"tools": tools},
        "openai_realtime.json": {
            "type": "session.update",
            "session": {
                "type": "realtime",
                "tools": [
                    {
                        "type": "function",
                        "name": spoken(tool),
                        "description": tool["description"],
                        "parameters": openai_parameters(tool["inputSchema"]),
                    }
                    for tool in tools
                ],
            },
        },
        "gemini_live.json": {
            "tools": [
                {
                    "function_declarations": [
                        {
                            "name": spoken(tool),
                            "description": tool["description"],
                            "parameters": gemini_schema(tool["inputSchema"]),
                        }
                        for tool in tools
                    ]
                }
            ]
        },
    }


async def export(directory: Path) -> dict[Path, str]:
    """Every file of `tool_schemas/`, as text, keyed by its path under `directory`."""
    files: dict[Path, str] = {}
    for tier in Tier:
        for name, document in (await render(tier)).items():
            files[directory / tier.value.lower() / name] = json.dumps(document, indent=2) + "\n"
    return files
