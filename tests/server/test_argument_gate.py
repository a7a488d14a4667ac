"""Every invalid argument of a tool or resource is answered with an error that names the field
and the rule it broke, in at most 1 kB, with no driver text; subscriptions only to this
server's own resources, and not too many per connection."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from glyphoxa_mcp.db.driver_errors import translate
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.refusals import MAX_ANSWER, fit
from glyphoxa_mcp.server.resource_uris import RESOURCE_NOT_FOUND, not_found_code, resource_kind
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.tool_arguments import argument_problems
from glyphoxa_mcp.server.tool_schemas import tier_tools
from glyphoxa_mcp.server.tools import ARGUMENTS
from glyphoxa_mcp.views.view import View
from tests.conftest import TEST_EMBEDDING_DIM, read_only, unhurried
from tests.server.conftest import call, call_error

SEARCH_FACTS = "memory.search_facts"
SEARCH_SESSIONS = "memory.search_sessions"
MEGABYTE = "y" * 1_000_000


def problems(tool: str, **arguments: Any) -> list[str]:
    return argument_problems(ARGUMENTS[tool], arguments)


# --- the rules, without a server --------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        (SEARCH_FACTS, {"query": "x", "topk": 3}, "unknown argument 'topk' (did you mean top_k?)"),
        (SEARCH_FACTS, {"query": "x", "sessionId": "s1"}, "(did you mean session_id?)"),
        (SEARCH_FACTS, {"q": "x"}, "query is required: text of at most 1000 characters"),
        (SEARCH_FACTS, {"query": "x", "top_k": 10**20}, "top_k must be at most 1000"),
        (SEARCH_FACTS, {"query": "x", "top_k": -3}, "top_k must be 0 or more"),
        (SEARCH_FACTS, {"query": "x", "top_k": "ten"}, "top_k must be an integer from 0 to 1000"),
        (SEARCH_FACTS, {"query": "x", "entity": "a\x00b"}, "entity must not contain NUL"),
        (SEARCH_FACTS, {"query": "x", "after": MEGABYTE}, "after must be at most 64 characters"),
        (SEARCH_FACTS, {"query": 7}, "query must be text of at most 1000 characters"),
        (SEARCH_SESSIONS, {"query": "x", "npc_id": "n" * 129}, "npc_id must be at most 128"),
        ("memory.query_entities", {"type": "dragon"}, "type must be one of npc, player"),
        ("memory.query_entities", {"depth": 99}, "depth must be at most 10"),
        ("memory.get_session_summary", {"sessions_ago": 0}, "sessions_ago must be 1 or more"),
    ],
)
def test_each_broken_rule_is_named_with_its_field(
    tool: str, arguments: dict[str, Any], problem: str
) -> None:
    assert any(problem in found for found in problems(tool, **arguments)), problems(
        tool, **arguments
    )


def test_valid_arguments_have_no_problems() -> None:
    assert problems(SEARCH_FACTS, query="x", top_k=900, after="day 3") == []
    assert problems("memory.query_entities", type="npc", limit=0) == []


def test_the_input_is_never_echoed_in_full() -> None:
    [problem] = problems(SEARCH_FACTS, query="x", **{MEGABYTE: 1})
    assert len(problem) < 200 and "(known: query, entity" in problem


def test_answers_are_cut_to_a_kilobyte_of_utf8() -> None:
    assert fit("ok") == "ok"
    cut = fit("é" * 5000)
    assert len(cut.encode()) <= MAX_ANSWER and cut.endswith("…")


async def test_every_tool_schema_refuses_unknown_names_and_bounds_every_argument() -> None:
    for tool in await tier_tools(Tier.DEEP):
        schema = tool["inputSchema"]
        assert schema["additionalProperties"] is False, tool["name"]
        for name, prop in schema["properties"].items():
            options = prop.get("anyOf", [prop])
            for option in options:
                if option.get("type") == "string":
                    assert "maxLength" in option, (tool["name"], name)
                if option.get("type") == "integer":
                    assert {"minimum", "maximum"} <= option.keys(), (tool["name"], name)


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("glyphoxa://npcs", "npcs"),
        ("glyphoxa://campaign/vocabulary", "vocabulary"),
        ("glyphoxa://npc/grimjaw/hot?session=s1", "hot"),
        ("glyphoxa://npc/grimjaw/prefetch?utterance=%2Fme%20waves", "prefetch"),
    ],
)
def test_the_servers_own_uris_are_known(uri: str, kind: str) -> None:
    assert resource_kind(uri) == kind


@pytest.mark.parametrize(
    ("uri", "code", "named"),
    [
        ("x://junk/1", RESOURCE_NOT_FOUND, "uri 'x://junk/1'"),
        ("glyphoxa://npc/grimjaw/cold", RESOURCE_NOT_FOUND, "uri"),
        ("glyphoxa://npc/a%00b/hot", INVALID_PARAMS, "npc_id must not contain NUL"),
        ("glyphoxa://npc/grimjaw/hot?sesion=s1", INVALID_PARAMS, "(did you mean session?)"),
        (
            "glyphoxa://npc/grimjaw/prefetch?utterance=" + "u" * 1001,
            INVALID_PARAMS,
            "utterance must be at most 1000 characters",
        ),
        ("glyphoxa://npc/grimjaw/hot?session=" + MEGABYTE, INVALID_PARAMS, "uri must be at most"),
    ],
)
def test_other_uris_are_refused_naming_what_is_wrong(uri: str, code: int, named: str) -> None:
    with pytest.raises(MCPError) as refused:
        resource_kind(uri)
    assert refused.value.code == code and named in refused.value.message
    assert len(refused.value.message.encode()) <= MAX_ANSWER


def test_resource_not_found_is_32002_until_the_protocol_that_retired_it() -> None:
    assert not_found_code("2025-11-25") == not_found_code("2024-11-05") == -32002
    assert not_found_code("2026-07-28") == INVALID_PARAMS


@pytest.mark.parametrize(
    "exc",
    [
        asyncpg.DatetimeFieldOverflowError(
            "invalid input for query argument $3: datetime.datetime(1, 1, 1) (date value out "
            "of range)"
        ),
        asyncpg.NumericValueOutOfRangeError("value out of int64 range"),
        asyncpg.PostgresSyntaxError('syntax error at or near "SELECT"'),
    ],
)
def test_driver_errors_become_messages_without_the_drivers_text(exc: Exception) -> None:
    message = translate(exc, "search facts").message
    assert message.startswith("Cannot search facts:")
    for driver_text in ("$3", "datetime", "int64", "SELECT", "out of range)"):
        assert driver_text not in message


# --- through a server -------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def village_client(village_dsn: str, protocol: str = "auto") -> AsyncIterator[Client]:
    async with read_only(village_dsn, TEST_EMBEDDING_DIM) as memory:
        state = ServerState(View(memory), unhurried(Tier.DEEP))
        async with Client(build_server(state), mode=protocol) as client:
            yield client


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"query": "x", "npc_id": "Old Berrit"}, "npc_id must be an id"),
        ({"query": "x", "after": "0001-01-01T00:00+14:00"}, "after must be an ISO date between"),
        ({"query": "x", "before": "9999-12-31T23:59-14:00"}, "before must be an ISO date"),
        ({"query": "x", "topk": 3}, "unknown argument 'topk' (did you mean top_k?)"),
        ({"query": "x", "after": MEGABYTE}, "after must be at most 64 characters"),
        ({"query": "x", "speaker": "Mi\x00ra"}, "speaker must not contain NUL"),
    ],
)
async def test_tools_refuse_bad_arguments_naming_the_field(
    village_dsn: str, arguments: dict[str, Any], named: str
) -> None:
    async with village_client(village_dsn) as client:
        error = await call_error(client, SEARCH_SESSIONS, **arguments)
        # The server keeps serving.
        assert (await call(client, "memory.query_entities", name="Grimjaw"))["entities"]
    assert named in error and len(error.encode()) <= MAX_ANSWER
    assert "asyncpg" not in error and "$3" not in error and "validation error" not in error


async def test_a_story_day_beyond_the_calendar_is_refused(village_dsn: str) -> None:
    async with village_client(village_dsn) as client:
        error = await call_error(client, SEARCH_FACTS, query="x", after="day 99999999999999999")
    assert "after must be a story day from 0 to" in error


async def test_underscore_names_are_checked_too(village_dsn: str) -> None:
    async with village_client(village_dsn) as client:
        error = await call_error(client, "memory_search_facts", query="x", limit=3)
    assert "Invalid arguments for memory.search_facts: unknown argument 'limit'" in error


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
@pytest.mark.parametrize(
    ("uri", "named"),
    [
        ("x://junk/1", "No resource at uri 'x://junk/1'"),
        ("glyphoxa://npc/nobody/hot", "No NPC 'nobody' (npc_id)"),
        ("glyphoxa://npc/grimjaw/hot?session=s9", "No session 's9' (session)"),
    ],
)
async def test_a_missing_resource_is_the_specs_resource_not_found(
    village_dsn: str, protocol: str, uri: str, named: str
) -> None:
    async with village_client(village_dsn, protocol) as client:
        with pytest.raises(MCPError) as missing:
            await client.read_resource(uri)
    # -32002 through 2025-11-25; 2026-07-28 retired it for INVALID_PARAMS.
    assert missing.value.code == (-32002 if protocol == "legacy" else INVALID_PARAMS)
    assert named in missing.value.message


async def test_bad_resource_parameters_are_invalid_params_naming_them(village_dsn: str) -> None:
    async with village_client(village_dsn, "legacy") as client:
        with pytest.raises(MCPError) as nul:
            await client.read_resource("glyphoxa://npc/grim%00jaw/hot")
        with pytest.raises(MCPError) as long:
            await client.read_resource("glyphoxa://npc/grimjaw/hot?session=" + "s" * 10_000)
        with pytest.raises(MCPError) as place:
            await client.read_resource("glyphoxa://npc/red-kettle/hot")
    assert nul.value.code == long.value.code == place.value.code == INVALID_PARAMS
    assert "npc_id must not contain NUL characters" in nul.value.message
    assert "session must be at most 128 characters" in long.value.message
    assert len(long.value.message.encode()) <= MAX_ANSWER and "s" * 100 not in str(long.value.data)
    assert "npc_id 'red-kettle' is a location, not an NPC" in place.value.message


async def test_an_utterance_that_looks_like_a_path_is_still_an_utterance(
    village_dsn: str,
) -> None:
    async with village_client(village_dsn) as client:
        for said in ("%2Fme%20waves", "I%3A%20think%20so", "..%2F..%2Fetc"):
            read = await client.read_resource(f"glyphoxa://npc/mira/prefetch?utterance={said}")
            assert '"npc"' in read.contents[0].text
