"""A background task that raises what nobody expected cannot take the HTTP server down: the
driver's `InternalClientError` (seen after a PostgreSQL restart) injected into the live
indexer's connection, on a real server on loopback with real MCP clients. (The postmaster
killed under load, in a `serve` process of its own, is tests/cli/test_faults.py.)"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import asyncpg
import httpx
import pytest
from mcp.client import Client

from glyphoxa_mcp.db.database import Database, DatabaseLocation, init_connection, keep_session
from glyphoxa_mcp.mcp_text import text_of
from tests.conftest import DatabaseFactory, PostgresForTests
from tests.server.http_serving import load_demo, mcp_client, serving

START = datetime(2026, 11, 20, 19, tzinfo=UTC)
# What the live indexer reads first each time it catches up (storage/semantic_index.py).
INDEXER_QUERY = "SELECT content_hash FROM chunks"
FAULTS = 3


class ConfusedConnection(asyncpg.Connection):  # type: ignore[misc]
    """A connection whose first few reads of the chunks fail as asyncpg fails after a
    restart, with an error that is neither a PostgresError nor an InterfaceError."""

    faults_left = FAULTS

    async def fetch(self, query: str, *args: Any, **kwargs: Any) -> list[Any]:
        if INDEXER_QUERY in query and ConfusedConnection.faults_left > 0:
            ConfusedConnection.faults_left -= 1
            raise asyncpg.InternalClientError(
                "cannot switch to state 15; another operation (2) is in progress"
            )
        return list(await super().fetch(query, *args, **kwargs))


@contextlib.asynccontextmanager
async def confused_database(
    test_server: PostgresForTests, databases: DatabaseFactory
) -> AsyncIterator[Database]:
    name = await databases.take(test_server.template_256)
    location = DatabaseLocation(test_server.dsn(name), f"test database {name}")
    pool = await asyncpg.create_pool(
        location.dsn,
        min_size=1,
        max_size=4,
        init=init_connection,
        reset=keep_session,
        connection_class=ConfusedConnection,
    )
    database = Database(pool, location, 256)
    try:
        yield database
    finally:
        await database.close()
        databases.drop(name)


def line(number: int) -> dict[str, Any]:
    return {
        "utterance_id": f"u{number}",
        "speaker_id": "kael",
        "speaker_name": "Kael",
        "text": f"Line {number}: the harbour bell rang again.",
        "timestamp": (START + timedelta(seconds=number)).isoformat(),
    }


async def call(connected: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await connected.call_tool(tool, arguments)
    assert not result.is_error, text_of(result.content)
    assert result.structured_content is not None
    return dict(result.structured_content)


@pytest.mark.e2e
async def test_the_live_indexer_failing_unexpectedly_leaves_the_server_whole(
    test_server: PostgresForTests, databases: DatabaseFactory
) -> None:
    ConfusedConnection.faults_left = FAULTS
    async with confused_database(test_server, databases) as db:
        await load_demo(db)
        async with (
            serving(db, auth=False) as base,
            httpx.AsyncClient(base_url=base) as http,
            mcp_client(f"{base}/c/demo/record/mcp") as recorder,
            mcp_client(f"{base}/c/demo/npc/ysolde/standard/mcp") as npc,
        ):
            await call(recorder, "session.start", {"session_id": "live"})
            number = 0
            with anyio.fail_after(20):
                while ConfusedConnection.faults_left > 0:  # each append wakes the indexer
                    number += 1
                    await call(
                        recorder,
                        "transcript.append",
                        {"session_id": "live", "utterances": [line(number)]},
                    )
                    await anyio.sleep(0.2)
            # The server is whole: calls and appends are answered, /healthz says so.
            await call(npc, "memory.query_entities", {"name": "Berrit"})
            await call(
                recorder,
                "transcript.append",
                {"session_id": "live", "utterances": [line(number + 1)]},
            )
            health = await http.get("/healthz")
            assert health.status_code == 200, health.text
            assert health.json()["background"]["contained_errors"] == 0  # the indexer's own
            # ... and the indexer, retried with backoff, indexes every line in the end.
            with anyio.fail_after(20):
                while (
                    await db.pool.fetchval("SELECT count(*) FROM chunks WHERE session_id = 'live'")
                    == 0
                ):
                    await anyio.sleep(0.2)
            # A new client is served too (the session managers run).
            async with mcp_client(f"{base}/c/demo/npc/ysolde/standard/mcp") as again:
                await call(again, "memory.query_entities", {"name": "Berrit"})
