from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import BaseModel, Field

from glyphoxa_mcp.server.json_schema import plain_schema
from glyphoxa_mcp.server.tool_schemas import (
    GEMINI_KEYS,
    GEMINI_NAME,
    MCP_NAME,
    OPENAI_FORBIDDEN,
    OPENAI_NAME,
    export,
    flatten,
)
from tests.cli.runner import run_in_process

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tool_schemas"
TIER_TOOLS = {"fast": 1, "standard": 4, "deep": 4}


async def test_the_shipped_schemas_match_what_the_code_generates(tmp_path: Path) -> None:
    generated = await export(tmp_path)
    shipped = sorted(p.relative_to(SHIPPED) for p in SHIPPED.rglob("*.json"))
    assert shipped == sorted(p.relative_to(tmp_path) for p in generated)
    for path, text in generated.items():
        assert (SHIPPED / path.relative_to(tmp_path)).read_text() == text, (
            f"{path.relative_to(tmp_path)} drifted: run `glyphoxa-mcp schemas`"
        )


def nodes(schema: Any) -> list[dict[str, Any]]:
    """Every schema object inside a parameters schema."""
    found = [schema]
    for child in schema.get("properties", {}).values():
        found += nodes(child)
    if isinstance(schema.get("items"), dict):
        found += nodes(schema["items"])
    return found


def load(tier: str, name: str) -> dict[str, Any]:
    return json.loads((SHIPPED / tier / name).read_text())


@pytest.mark.parametrize("tier", TIER_TOOLS)
def test_mcp_files_list_the_tiers_tools_with_both_schemas(tier: str) -> None:
    tools = load(tier, "mcp.json")["tools"]
    assert len(tools) == TIER_TOOLS[tier]
    for tool in tools:
        assert MCP_NAME.match(tool["name"]) and tool["name"].startswith("memory.")
        assert tool["inputSchema"]["type"] == "object" and tool["outputSchema"]["type"] == "object"
        assert tool["annotations"]["readOnlyHint"] is True


@pytest.mark.parametrize("tier", TIER_TOOLS)
def test_openai_realtime_files_are_valid_session_updates(tier: str) -> None:
    from openai.types.realtime import SessionUpdateEvent

    event = load(tier, "openai_realtime.json")
    parsed = SessionUpdateEvent.model_validate(event)
    assert parsed.session.type == "realtime"
    assert len(parsed.session.tools or []) == TIER_TOOLS[tier]


@pytest.mark.parametrize("tier", TIER_TOOLS)
def test_openai_realtime_files_fit_openai(tier: str) -> None:
    event = load(tier, "openai_realtime.json")
    assert event["type"] == "session.update"
    tools = event["session"]["tools"]
    assert len(tools) == TIER_TOOLS[tier]
    for tool in tools:
        assert tool["type"] == "function" and OPENAI_NAME.match(tool["name"])
        for node in nodes(tool["parameters"]):
            assert not OPENAI_FORBIDDEN & node.keys(), (tool["name"], node)
            assert node.get("default", "unset") is not None, (tool["name"], node)
            assert node["type"] in {"object", "string", "integer", "number", "boolean", "array"}


@pytest.mark.parametrize("tier", TIER_TOOLS)
def test_gemini_live_files_fit_geminis_subset(tier: str) -> None:
    [tools] = load(tier, "gemini_live.json")["tools"]
    declarations = tools["function_declarations"]
    assert len(declarations) == TIER_TOOLS[tier]
    for declaration in declarations:
        assert GEMINI_NAME.match(declaration["name"]) and "." not in declaration["name"]
        for node in nodes(declaration["parameters"]):
            assert node.keys() <= GEMINI_KEYS, (declaration["name"], node.keys() - GEMINI_KEYS)
            assert node["type"] in {"OBJECT", "STRING", "INTEGER", "NUMBER", "BOOLEAN", "ARRAY"}


def test_a_union_of_two_real_types_is_refused_not_mangled() -> None:
    with pytest.raises(ValueError, match="union of 2 types"):
        flatten({"anyOf": [{"type": "string"}, {"type": "integer"}]})


@pytest.mark.e2e
def test_the_schemas_command_checks_and_writes(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "glyphoxa_mcp", "schemas", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert run("--check", "--out", str(SHIPPED)).returncode == 0
    # The rest in process: the command's logic, without a process start each.
    assert run_in_process("schemas", "--check", "--out", str(tmp_path)).returncode == 1
    assert run_in_process("schemas", "--out", str(tmp_path)).returncode == 0
    (tmp_path / "fast" / "stale.json").write_text("{}")
    stale = run_in_process("schemas", "--check", "--out", str(tmp_path))
    assert stale.returncode == 1 and "stale.json" in stale.stdout


class _Hop(BaseModel):
    via: Literal["knows", "owns"] | None = None
    depth: int | None = Field(default=None, ge=0)


class _Found(BaseModel):
    name: str
    note: str | None = None
    hops: list[_Hop]
    best: _Hop | None = None


class _Tree(BaseModel):
    children: list[_Tree] = []


def test_an_output_schema_is_inlined_and_checks_exactly_what_it_did() -> None:
    original = _Found.model_json_schema()
    plain = plain_schema(original)
    assert "$ref" not in json.dumps(plain) and "$defs" not in plain
    # A nullable string becomes a type list; a nullable choice among values stays a choice.
    assert plain["properties"]["note"]["type"] == ["string", "null"]
    assert "anyOf" in plain["properties"]["hops"]["items"]["properties"]["via"]
    instances: list[Any] = [
        {"name": "Mira", "hops": []},
        {"name": "Mira", "note": None, "hops": [{"via": None, "depth": 0}], "best": None},
        {"name": "Mira", "hops": [{"via": "knows"}], "best": {"depth": 2}},
        {"name": "Mira", "hops": [{"via": "hates"}]},
        {"name": "Mira", "hops": [{"depth": -1}]},
        {"name": None, "hops": []},
        {"name": "Mira", "note": 3, "hops": []},
        {"name": "Mira", "hops": [], "best": "Oswin"},
        {"hops": []},
    ]
    original_check = Draft202012Validator(original)
    plain_check = Draft202012Validator(plain)
    verdicts = [
        (original_check.is_valid(instance), plain_check.is_valid(instance))
        for instance in instances
    ]
    assert all(before == after for before, after in verdicts)
    assert [before for before, _ in verdicts] == [True, True, True] + [False] * 6


def test_a_schema_that_refers_to_itself_is_left_as_it_is() -> None:
    schema = _Tree.model_json_schema()
    assert plain_schema(schema) == schema


def test_the_served_output_schemas_have_no_references() -> None:
    for tool in json.loads((SHIPPED / "deep" / "mcp.json").read_text())["tools"]:
        assert "$ref" not in json.dumps(tool["outputSchema"]), tool["name"]
