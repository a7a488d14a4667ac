"""`glyphoxa-mcp serve` as users run it: a stdio subprocess, and HTTP on a loopback port."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import StdioServerParameters
from mcp.client import Client
from mcp.client.sse import sse_client

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.cli.runner import run_in_process
from tests.conftest import PostgresForTests, seed_spoken_village, seeded_database
from tests.server.semantic_fixtures import load_facts, load_sessions
from tests.storage.graph_fixtures import build_village

pytestmark = pytest.mark.e2e

ALL_DOTTED = [
    "memory.search_sessions",
    "memory.query_entities",
    "memory.get_session_summary",
    "memory.search_facts",
]


def serving_env(dsn: str) -> dict[str, str]:
    """Environment for a `serve` subprocess over campaign 'ashfall' of `dsn`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GLYPHOXA_", "OPENAI_"))}
    env.update(
        {
            "GLYPHOXA_DSN": dsn,
            "GLYPHOXA_EMBEDDING_DIM": "384",
            "GLYPHOXA_CAMPAIGN": "ashfall",
            # Loopback only; tokens are tested in test_table_http.py.
            "GLYPHOXA_AUTH": "none",
            # Deadlines are tested in test_tier_gate.py: a busy machine must not fail these.
            **{f"GLYPHOXA_{tier}_DEADLINE_MS": "60000" for tier in ("FAST", "STANDARD", "DEEP")},
        }
    )
    return env


@pytest.fixture(scope="module")
def shared_env(
    test_server: PostgresForTests, offline_embedder: LocalMiniLMEmbedder
) -> dict[str, str]:
    """Environment for `serve` over the spoken village, seeded once for the tests of this
    module that only read (a database of the module's own: servers may write their own
    bookkeeping, which no other module's reads should see)."""

    async def seed(memory: CampaignMemory) -> None:
        await seed_spoken_village(memory, offline_embedder)

    return serving_env(seeded_database(test_server, test_server.template_384, 384, seed))


@pytest.fixture
async def served_env(
    db384: Database, semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> dict[str, str]:
    """Environment for `serve` over the spoken village in a database of the test's own, for
    a test that writes to it."""
    await build_village(semantic_memory)
    await load_sessions(semantic_memory, offline_embedder)
    await load_facts(semantic_memory, offline_embedder)
    return serving_env(db384.location.dsn)


def serve_args(*extra: str) -> list[str]:
    return ["-m", "glyphoxa_mcp", "serve", *extra]


async def test_stdio_serves_underscore_names_and_answers(shared_env: dict[str, str]) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=serve_args("--tool-names", "underscore"),
        env=shared_env,
        cwd=str(Path.cwd()),
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            assert tools == [name.replace(".", "_") for name in ALL_DOTTED]
            result = await client.call_tool("memory_search_sessions", {"query": "caravan Saltmere"})
            assert not result.is_error
            assert "Saltmere" in result.structured_content["results"][0]["text"]
            dotted = await client.call_tool("memory.query_entities", {"name": "grimjaw"})
            assert dotted.structured_content["entities"][0]["id"] == "grimjaw"


async def test_stdio_applies_the_npc_scope(shared_env: dict[str, str]) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=serve_args("--npc", "mira", "--tier", "fast"),
        env=shared_env,
    )
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["memory.query_entities"]
            cult = await client.call_tool("memory.query_entities", {"name": "cult"})
            assert cult.structured_content["entities"] == []
            refused = await client.call_tool("memory.search_facts", {"query": "cult"})
            assert refused.is_error and "FAST tier" in refused.content[0].text


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def served(env: dict[str, str], log: Path, *extra: str) -> Iterator[str]:
    """`serve` in a subprocess on a free loopback port; its base URL."""
    port = free_port()
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, *serve_args(*extra, "--port", str(port))],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    assert "Traceback" not in log.read_text(), log.read_text()


@pytest.fixture(scope="module")
def http_server(
    shared_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """One `serve --transport http` for the tests that only call it."""
    log = tmp_path_factory.mktemp("http") / "serve.log"
    with served(shared_env, log, "--transport", "http", "--tier", "DEEP") as base:
        yield base


async def wait_until_healthy(base: str) -> dict[str, object]:
    with anyio.fail_after(60):
        async with httpx.AsyncClient() as http:
            while True:
                try:
                    response = await http.get(f"{base}/healthz")
                    if response.status_code == 200:
                        return response.json()
                except httpx.TransportError:
                    pass
                await anyio.sleep(0.2)


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_http_serves_every_tier_over_streamable_http_and_sse(
    http_server: str, protocol: str
) -> None:
    health = await wait_until_healthy(http_server)
    assert health["status"] == "ok" and health["serving"] == "the DM of campaign 'ashfall'"
    with anyio.fail_after(60):
        async with Client(f"{http_server}/fast/mcp", mode=protocol) as fast:
            assert [t.name for t in (await fast.list_tools()).tools] == ["memory.query_entities"]
        async with Client(f"{http_server}/standard/mcp", mode=protocol) as standard:
            assert [t.name for t in (await standard.list_tools()).tools] == ALL_DOTTED
            facts = await standard.call_tool("memory.search_facts", {"query": "bridge rebuilt"})
            assert "Town Watch" in facts.structured_content["results"][0]["text"]
        async with Client(f"{http_server}/mcp", mode=protocol) as default:
            deep = await default.call_tool(
                "memory.query_entities", {"related_to": "grimjaw", "depth": 5}
            )
            assert deep.structured_content["depth"]["used"] == 3


async def test_sse_endpoints_per_tier(http_server: str) -> None:
    await wait_until_healthy(http_server)
    with anyio.fail_after(60):
        async with Client(sse_client(f"{http_server}/fast/sse"), mode="legacy") as fast:
            assert [t.name for t in (await fast.list_tools()).tools] == ["memory.query_entities"]
        async with Client(sse_client(f"{http_server}/deep/sse"), mode="legacy") as deep:
            result = await deep.call_tool("memory.get_session_summary", {"session_id": "s1"})
            assert result.structured_content["session_id"] == "s1"


@pytest.mark.parametrize(
    ("extra", "env", "expected"),
    [
        ((), {"GLYPHOXA_TIER": "ULTRA"}, "--tier / GLYPHOXA_TIER"),
        (("--transport", "carrier-pigeon"), {}, "--transport / GLYPHOXA_TRANSPORT"),
        (("--npc", "grimjw"), {}, "Did you mean grimjaw"),
        (("--campaign", "nowhere"), {}, "No campaign 'nowhere'"),
        (("--port", "70000"), {}, "--port / GLYPHOXA_PORT"),
        (
            ("--max-sessions-per-token", "0"),
            {},
            "--max-sessions-per-token / GLYPHOXA_MAX_SESSIONS_PER_TOKEN",
        ),
        (
            (),
            {"GLYPHOXA_HEADER_TIMEOUT_S": "soon"},
            "--header-timeout-s / GLYPHOXA_HEADER_TIMEOUT_S",
        ),
    ],
)
def test_bad_serve_settings_exit_2_with_the_fix(
    shared_env: dict[str, str], extra: tuple[str, ...], env: dict[str, str], expected: str
) -> None:
    # In process: what is checked is the command's own logic; a served subprocess is above.
    result = run_in_process("serve", *extra, env=shared_env | env)
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


async def test_a_served_npc_hears_a_line_written_by_another_process(
    served_env: dict[str, str], semantic_memory: CampaignMemory
) -> None:
    from datetime import UTC, datetime

    from mcp import types
    from mcp.shared.exceptions import MCPDeprecationWarning

    from glyphoxa_mcp.domain.models import NewEntry

    updated = anyio.Event()

    async def on_message(message: object) -> None:
        if (
            isinstance(message, types.ResourceUpdatedNotification)
            and message.params.uri == "glyphoxa://npc/grimjaw/hot"
        ):
            updated.set()

    params = StdioServerParameters(command=sys.executable, args=serve_args(), env=served_env)
    with anyio.fail_after(60):
        async with Client(params, mode="legacy", message_handler=on_message) as client:
            with pytest.warns(MCPDeprecationWarning):
                await client.subscribe_resource("glyphoxa://npc/grimjaw/hot")
            await semantic_memory.log.append(
                "s2",
                NewEntry(
                    speaker_id="mira",
                    speaker_name="Mira",
                    text="Is the ferry running?",
                    spoken_at=datetime(2026, 3, 8, 19, 5, tzinfo=UTC),
                ),
            )
            await updated.wait()
            hot = await client.read_resource("glyphoxa://npc/grimjaw/hot")
            assert "Is the ferry running?" in hot.contents[0].text


async def test_the_voice_bridge_reaches_a_tier_over_sse(http_server: str) -> None:
    from glyphoxa_mcp.bridge import MemoryBridge

    await wait_until_healthy(http_server)
    with anyio.fail_after(60):
        async with MemoryBridge.over_sse(f"{http_server}/standard/sse") as bridge:
            [item, _] = await bridge.answer_realtime(
                {
                    "call_id": "c1",
                    "name": "memory_search_facts",
                    "arguments": json.dumps({"query": "who rebuilt the bridge"}),
                }
            )
            gemini = await bridge.answer_gemini(
                {
                    "toolCall": {
                        "functionCalls": [
                            {
                                "id": "g1",
                                "name": "memory_get_session_summary",
                                "args": {"session_id": "s1"},
                            }
                        ]
                    }
                }
            )
    facts = json.loads(item["item"]["output"])
    assert "Town Watch" in facts["results"][0]["text"]
    assert gemini["toolResponse"]["functionResponses"][0]["response"]["session_id"] == "s1"


async def test_sse_transport_serves_one_tier(shared_env: dict[str, str], tmp_path: Path) -> None:
    with served(shared_env, tmp_path / "sse.log", "--transport", "sse", "--tier", "FAST") as base:
        health = await wait_until_healthy(base)
        assert health["status"] == "ok"
        with anyio.fail_after(60):
            async with Client(sse_client(f"{base}/sse"), mode="legacy") as client:
                names = [t.name for t in (await client.list_tools()).tools]
                found = await client.call_tool("memory.query_entities", {"name": "Grimjaw"})
    assert names == ["memory.query_entities"]
    assert found.structured_content["entities"][0]["id"] == "grimjaw"
