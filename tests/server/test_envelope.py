"""A message that is not JSON-RPC gets one short JSON-RPC error, over streamable HTTP and
SSE alike: the field and the rule, never the values sent or the validation library's text."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
import httpx
import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.server.envelope import envelope_problem
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from tests.server.http_serving import load_demo, serving

PATH = "/c/demo/npc/ysolde/standard"
JSON_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
# Values a validation report would echo back.
MARKER = "ECHO-ME-7781"


@pytest.mark.parametrize(
    ("message", "code", "says"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": "x"}, -32600, "params: "),
        ({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}, -32600, "jsonrpc: "),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, -32600, "method: "),
        ({"jsonrpc": "2.0", "id": 1}, -32600, "result: Field required"),
        ([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], -32600, "a JSON object"),
    ],
)
def test_a_broken_envelope_is_named_by_its_field_and_rule(
    message: object, code: int, says: str
) -> None:
    problem = envelope_problem(json.dumps(message).encode())

    assert problem is not None and problem.code == code
    assert says in problem.message and "\n" not in problem.message


def test_a_body_that_is_not_json_is_a_parse_error_and_a_good_message_passes() -> None:
    assert envelope_problem(b'{"jsonrpc": "2.0", "id": 1,') is not None
    assert envelope_problem(b"{oops}").code == -32700  # type: ignore[union-attr]
    good = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    assert envelope_problem(json.dumps(good).encode()) is None


@dataclass
class Served:
    base: str
    auth: dict[str, str]


@pytest.fixture
async def served(db256: Database) -> AsyncIterator[Served]:
    await load_demo(db256)
    _, token = await AccessTokens(db256).create(Viewer.npc("demo", "ysolde"))
    async with serving(db256) as base:
        yield Served(base, {"Authorization": f"Bearer {token.token}"})


def assert_one_short_error(response: httpx.Response, code: int) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == code
    message = body["error"]["message"]
    assert "\n" not in message and len(message) < 200
    for leaked in (MARKER, "pydantic", "https://", "validation error"):
        assert leaked not in response.text


BROKEN = [
    ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": MARKER}, -32600),
    ({"jsonrpc": "2.0", "id": 1, "method": ["tools/call", MARKER], "params": {}}, -32600),
    ({"jsonrpc": MARKER, "id": 1, "method": "tools/list"}, -32600),
]


@pytest.mark.e2e
@pytest.mark.parametrize(("message", "code"), BROKEN)
async def test_streamable_http_answers_a_broken_message_in_one_line(
    served: Served, message: dict[str, object], code: int
) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.post(
            f"{served.base}{PATH}/mcp", json=message, headers=JSON_HEADERS | served.auth
        )
        not_json = await http.post(
            f"{served.base}{PATH}/mcp",
            content=b'{"a": ' + MARKER.encode(),
            headers=JSON_HEADERS | served.auth,
        )

    assert_one_short_error(response, code)
    assert_one_short_error(not_json, -32700)


@pytest.mark.e2e
async def test_sse_answers_a_broken_message_in_one_line(served: Served) -> None:
    async with (
        httpx.AsyncClient(timeout=10) as http,
        http.stream("GET", f"{served.base}{PATH}/sse", headers=served.auth) as stream,
    ):
        with anyio.fail_after(10):
            lines = stream.aiter_lines()
            async for line in lines:
                if line.startswith("data: "):
                    messages = line.removeprefix("data: ")
                    break
        responses = [
            await http.post(
                f"{served.base}{messages}", json=message, headers=JSON_HEADERS | served.auth
            )
            for message, _ in BROKEN
        ]

    for response, (_, code) in zip(responses, BROKEN, strict=True):
        assert_one_short_error(response, code)
