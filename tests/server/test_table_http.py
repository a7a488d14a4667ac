"""One HTTP server for the whole table: every NPC and the DM of every campaign, each request
in its own viewer's scope, admitted by bearer token, behind Host and Origin checks."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
import httpx
import pytest
from httpx2 import AsyncClient as McpHttpClient
from mcp import types
from mcp.client import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from glyphoxa_mcp.cli import main
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewEntry, NewSession
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.server.token_gate import RECHECK_S
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.server.http_serving import load_demo, serving

pytestmark = pytest.mark.e2e

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream"}
SECRET = "Salt Knives"


@dataclass
class Table:
    base: str
    db: Database
    tokens: dict[str, str]

    def headers(self, who: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}

    async def post(self, path: str, who: str | None = None, **headers: str) -> httpx.Response:
        async with httpx.AsyncClient() as http:
            return await http.post(
                f"{self.base}{path}",
                json=INITIALIZE,
                headers=MCP_HEADERS | self.headers(who) | headers,
            )

    @contextlib.asynccontextmanager
    async def client(
        self, path: str, who: str, protocol: str = "legacy", **kw: Any
    ) -> AsyncIterator[Client]:
        http = McpHttpClient(headers=self.headers(who), timeout=30)
        async with (
            http,
            Client(
                streamable_http_client(f"{self.base}{path}", http_client=http), mode=protocol, **kw
            ) as client,
        ):
            yield client


@pytest.fixture
def db(db256: Database) -> Database:
    """Servers here embed with the default offline model, as `serve` does."""
    return db256


@pytest.fixture
async def table(db: Database) -> AsyncIterator[Table]:
    await load_demo(db)
    tokens = AccessTokens(db)
    made = {
        "ysolde": await tokens.create(Viewer.npc("demo", "ysolde")),
        "berrit": await tokens.create(Viewer.npc("demo", "berrit"), max_tier=Tier.FAST),
        "dm": await tokens.create(Viewer.dm("demo")),
    }
    async with serving(db) as base:
        yield Table(base, db, {who: token.token for who, (_, token) in made.items()})


async def names_found(client: Client, name: str) -> list[str]:
    result = await client.call_tool("memory.query_entities", {"name": name})
    assert not result.is_error, result.content
    return [e["name"] for e in result.structured_content["entities"]]


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_two_npcs_on_one_server_each_read_their_own_scope(
    table: Table, protocol: str
) -> None:
    found: dict[str, list[str]] = {}

    async def ask(who: str, tier: str) -> None:
        async with table.client(f"/c/demo/npc/{who}/{tier}/mcp", who, protocol) as client:
            found[who] = await names_found(client, SECRET)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(ask, "ysolde", "deep")
            tasks.start_soon(ask, "berrit", "fast")
    assert SECRET not in found["ysolde"]
    assert SECRET in found["berrit"]


async def test_the_dm_path_reads_every_secret_over_sse(table: Table) -> None:
    with anyio.fail_after(30):
        async with Client(
            sse_client(f"{table.base}/c/demo/dm/standard/sse", headers=table.headers("dm")),
            mode="legacy",
        ) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            assert SECRET in await names_found(client, SECRET)
    assert len(tools) == 4


@pytest.mark.parametrize(
    ("path", "who", "status"),
    [
        ("/c/demo/npc/ysolde/standard/mcp", None, 401),
        ("/c/demo/npc/berrit/standard/mcp", "ysolde", 403),
        ("/c/demo/dm/standard/mcp", "ysolde", 403),
        ("/c/demo/npc/berrit/deep/mcp", "berrit", 403),
        ("/c/demo/npc/berrit/fast/mcp", "berrit", 200),
        ("/c/elsewhere/npc/ysolde/standard/mcp", "ysolde", 403),
        ("/c/demo/npc/ysolde/ultra/mcp", "ysolde", 404),
        ("/c/demo/npc/ysolde/standard/other", "ysolde", 404),
    ],
)
async def test_a_token_opens_only_the_paths_it_grants(
    table: Table, path: str, who: str | None, status: int
) -> None:
    response = await table.post(path, who)
    assert response.status_code == status, response.text
    if status == 401:
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert table.tokens["ysolde"] not in response.text


async def test_a_token_on_another_campaigns_path_is_forbidden_naming_its_own(
    table: Table,
) -> None:
    response = await table.post("/c/elsewhere/dm/standard/mcp", "ysolde")

    assert response.status_code == 403
    assert response.json()["error"] == (
        "Forbidden: this token is for NPC 'ysolde' of campaign 'demo', not the DM of "
        "campaign 'elsewhere'."
    )


async def test_a_made_up_bearer_token_is_unauthorized(table: Table) -> None:
    for header in ("Bearer nonsense", "Bearer gxm_000000000000_" + "A" * 43, "Basic abc"):
        response = await table.post("/c/demo/npc/ysolde/standard/mcp", Authorization=header)
        assert response.status_code == 401, header


async def test_a_revoked_token_stops_at_the_next_request_and_its_open_session_too(
    table: Table,
) -> None:
    path = "/c/demo/npc/ysolde/standard/mcp"
    assert (await table.post(path, "ysolde")).status_code == 200
    token_id = table.tokens["ysolde"].split("_")[1]
    with anyio.fail_after(30):
        async with table.client(path, "ysolde") as client:
            assert await names_found(client, "Ysolde")
            await AccessTokens(table.db).revoke(token_id)
            await anyio.sleep(RECHECK_S * 2)
            with pytest.raises(MCPError):  # the client's request is refused
                await names_found(client, "Ysolde")
    response = await table.post(path, "ysolde")
    assert response.status_code == 401 and "revoked" in response.json()["error"]


async def test_an_expired_token_is_unauthorized(table: Table) -> None:
    await table.db.pool.execute(
        "UPDATE access_tokens SET created_at = now() - interval '2 days', "
        "expires_at = now() - interval '1 day' WHERE npc_id = 'ysolde'"
    )
    await anyio.sleep(RECHECK_S * 2)
    response = await table.post("/c/demo/npc/ysolde/standard/mcp", "ysolde")
    assert response.status_code == 401 and "expired" in response.json()["error"]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example"}, 421),
        ({"Host": "evil.example:80", "Origin": "http://evil.example"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"Host": "memory.example:8765"}, 200),
        ({"Origin": "https://vtt.example"}, 200),
        ({"Origin": "http://localhost:5173"}, 200),
    ],
)
async def test_host_and_origin_are_checked_before_anything_else(
    table: Table, headers: dict[str, str], status: int
) -> None:
    response = await table.post("/c/demo/npc/ysolde/standard/mcp", "ysolde", **headers)
    assert response.status_code == status
    async with httpx.AsyncClient() as http:
        health = await http.get(f"{table.base}/healthz", headers=headers)
    assert health.status_code == (status if status != 200 else 200)


async def test_health_says_ok_without_details(table: Table) -> None:
    async with httpx.AsyncClient() as http:
        health = await http.get(f"{table.base}/healthz")
    assert health.status_code == 200
    body = health.json()
    assert {k: body[k] for k in ("status", "database", "serving", "auth")} == {
        "status": "ok",
        "database": "ok",
        "serving": "every campaign",
        "auth": "token",
    }
    # Answered without a token: task states and counts, nothing of any campaign or viewer.
    assert "problems" not in body
    for named in ("demo", "ysolde", "berrit", "npc"):
        assert named not in health.text.lower()


async def test_subscriptions_hear_only_their_own_npc(table: Table) -> None:
    heard: dict[str, list[str]] = {"ysolde": [], "berrit": []}
    both_heard = anyio.Event()

    def listener(who: str) -> Any:
        async def on_message(message: object) -> None:
            if isinstance(message, types.ResourceUpdatedNotification):
                heard[who].append(str(message.params.uri))
                if all(heard.values()):
                    both_heard.set()

        return on_message

    memory = CampaignMemory(table.db, "demo")
    await memory.sessions.upsert(NewSession(id="live", title="Live"))
    # Both at the scene, so both hear the DM's line (the demo is witnessed).
    await memory.scenes.record(
        [
            Scene(
                session_id="live",
                started_at=datetime(2026, 3, 9, 19, tzinfo=UTC),
                present=("ysolde", "berrit"),
            )
        ]
    )
    with anyio.fail_after(30):
        async with (
            table.client(
                "/c/demo/npc/ysolde/standard/mcp", "ysolde", message_handler=listener("ysolde")
            ) as ysolde,
            table.client(
                "/c/demo/npc/berrit/fast/mcp", "berrit", message_handler=listener("berrit")
            ) as berrit,
        ):
            with pytest.warns(MCPDeprecationWarning):
                await ysolde.subscribe_resource("glyphoxa://npc/ysolde/hot")
            with pytest.warns(MCPDeprecationWarning):
                await berrit.subscribe_resource("glyphoxa://npc/berrit/hot")
            with pytest.warns(MCPDeprecationWarning), pytest.raises(Exception, match="berrit"):
                await berrit.subscribe_resource("glyphoxa://npc/ysolde/hot")
            await memory.log.append(
                "live",
                NewEntry(
                    speaker_id="dm",
                    speaker_name="DM",
                    text="The tide turns.",
                    spoken_at=datetime(2026, 3, 9, 20, 0, tzinfo=UTC),
                ),
            )
            await both_heard.wait()
    assert set(heard["ysolde"]) == {"glyphoxa://npc/ysolde/hot"}
    assert set(heard["berrit"]) == {"glyphoxa://npc/berrit/hot"}


async def test_one_viewer_server_keeps_its_short_paths_and_checks_the_token(db: Database) -> None:
    await load_demo(db)
    _, ysolde = await AccessTokens(db).create(Viewer.npc("demo", "ysolde"))
    _, berrit = await AccessTokens(db).create(Viewer.npc("demo", "berrit"))
    async with (
        serving(db, single=Viewer.npc("demo", "ysolde")) as base,
        httpx.AsyncClient() as http,
    ):

        async def status(path: str, token: str) -> int:
            response = await http.post(
                f"{base}{path}",
                json=INITIALIZE,
                headers=MCP_HEADERS | {"Authorization": f"Bearer {token}"},
            )
            return response.status_code

        assert await status("/mcp", ysolde.token) == 200
        assert await status("/deep/mcp", ysolde.token) == 200
        assert await status("/c/demo/npc/ysolde/fast/mcp", ysolde.token) == 200
        assert await status("/mcp", berrit.token) == 403
        # Another viewer's own path is not served here, whatever the token.
        assert await status("/c/demo/npc/berrit/fast/mcp", berrit.token) == 404


async def test_loopback_without_auth_trusts_the_path(db: Database) -> None:
    await load_demo(db)
    async with serving(db, auth=False) as base, httpx.AsyncClient() as http:
        ok = await http.post(
            f"{base}/c/demo/npc/ysolde/fast/mcp", json=INITIALIZE, headers=MCP_HEADERS
        )
        missing = await http.post(
            f"{base}/c/demo/npc/nobody/fast/mcp", json=INITIALIZE, headers=MCP_HEADERS
        )
        health = await http.get(f"{base}/healthz")
    assert ok.status_code == 200
    assert missing.status_code == 404
    assert health.json()["auth"] == "none"


def test_no_auth_on_a_public_address_refuses_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--transport", "http", "--host", "0.0.0.0", "--auth", "none"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--auth none" in err and "loopback" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


async def raw_status(base: str, request: bytes) -> int:
    """The status a raw HTTP request gets: the bytes go as written, no client fixes them."""
    host, port = base.removeprefix("http://").split(":")
    with anyio.fail_after(10):
        async with await anyio.connect_tcp(host, int(port)) as stream:
            await stream.send(request)
            answer = b""
            while b"\r\n" not in answer:
                answer += await stream.receive()
    return int(answer.split(b" ")[1])


@pytest.mark.parametrize(
    "host_lines",
    [
        b"Host: 127.0.0.1@evil.example\r\n",
        b"Host: localhost, evil.example\r\n",
        b"Host: local host\r\n",
        b"Host: localhost:99999\r\n",
        b"Host: localhost:80junk\r\n",
        b"Host: ::1\r\n",
        b"Host: localhost\r\nHost: evil.example\r\n",
    ],
)
async def test_a_malformed_host_header_is_a_bad_request(table: Table, host_lines: bytes) -> None:
    for path in (b"/c/demo/npc/ysolde/standard/mcp", b"/healthz"):
        request = b"GET " + path + b" HTTP/1.1\r\n" + host_lines + b"Connection: close\r\n\r\n"
        assert await raw_status(table.base, request) == 400
    # The same request with a well-formed Host still passes the guard.
    plain = b"GET /healthz HTTP/1.1\r\nHost: localhost:8765\r\nConnection: close\r\n\r\n"
    assert await raw_status(table.base, plain) == 200
