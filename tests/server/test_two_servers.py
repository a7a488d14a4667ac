"""Past one machine: two HTTP servers over one PostgreSQL, as `serve` processes behind a load
balancer would be. A line a recorder appends through one is heard by an NPC subscribed on the
other, through PostgreSQL's change feed (sql/002_change_notifications.sql), not through
anything the two processes share in memory."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import asyncpg
import pytest
from mcp import types
from mcp.shared.exceptions import MCPDeprecationWarning

from glyphoxa_mcp.db.database import Database, init_connection, keep_session
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.server.resource_uris import hot_uri
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from tests.server.http_serving import load_demo, serving
from tests.server.test_table_http import Table

pytestmark = pytest.mark.e2e

HOT = hot_uri("ysolde")


@pytest.fixture
async def second_handle(db256: Database) -> AsyncIterator[Database]:
    """Another pool over the same database, as a second process would open."""
    pool = await asyncpg.create_pool(
        db256.location.dsn, min_size=1, max_size=4, init=init_connection, reset=keep_session
    )
    database = Database(pool, db256.location, db256.embedding_dim)
    try:
        yield database
    finally:
        await database.close()


async def test_a_line_recorded_through_one_server_reaches_a_subscriber_on_the_other(
    db256: Database, second_handle: Database
) -> None:
    await load_demo(db256)
    tokens = AccessTokens(db256)
    made = {
        "recorder": await tokens.create(Viewer.recorder("demo")),
        "ysolde": await tokens.create(Viewer.npc("demo", "ysolde")),
    }
    secrets = {who: token.token for who, (_, token) in made.items()}
    heard = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == HOT:
            heard.set()

    with anyio.fail_after(60):
        async with (
            serving(db256) as base_a,
            serving(second_handle) as base_b,
            Table(base_a, db256, secrets).client("/c/demo/record/mcp", "recorder") as recorder,
            Table(base_b, second_handle, secrets).client(
                "/c/demo/npc/ysolde/standard/mcp", "ysolde", message_handler=on_message
            ) as ysolde,
        ):
            assert base_a != base_b
            with pytest.warns(MCPDeprecationWarning, match="resources/subscribe"):
                await ysolde.subscribe_resource(HOT)
            started = await recorder.call_tool(
                "session.start",
                {
                    "session_id": "night",
                    "started_at": "2026-11-20T18:59:00+00:00",
                    "present": ["ysolde"],  # she hears it: she is at the table
                },
            )
            assert not started.is_error, text_of(started.content)
            appended = await recorder.call_tool(
                "transcript.append",
                {
                    "session_id": "night",
                    "utterances": [
                        {
                            "utterance_id": "u1",
                            "speaker_id": "kael",
                            "speaker_name": "Kael",
                            "text": "Ysolde, who rang the harbour bell?",
                            "timestamp": "2026-11-20T19:00:00+00:00",
                        }
                    ],
                },
            )
            assert not appended.is_error, text_of(appended.content)
            await heard.wait()
            read = await ysolde.read_resource(HOT)
    (content,) = read.contents
    assert isinstance(content, types.TextResourceContents)
    assert "who rang the harbour bell?" in content.text
