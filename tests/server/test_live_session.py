"""A whole live session over real HTTP on loopback: a recorder appends lines as a voice
bridge would while two NPCs read their hot context and search; session facts appear and
vanish; the session ends."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from tests.server.http_serving import load_demo, serving
from tests.server.test_table_http import Table

pytestmark = pytest.mark.e2e

START = datetime(2026, 11, 20, 19, tzinfo=UTC)
RECORDER_TOOLS = {
    "session.start",
    "transcript.append",
    "session.end",
    "session_facts.set",
    "session_facts.clear",
    "scene.set",
}


@pytest.fixture
def db(db256: Database) -> Database:
    return db256


@pytest.fixture
async def table(db: Database) -> AsyncIterator[Table]:
    await load_demo(db)
    tokens = AccessTokens(db)
    made = {
        "recorder": await tokens.create(Viewer.recorder("demo")),
        "ysolde": await tokens.create(Viewer.npc("demo", "ysolde")),
        "berrit": await tokens.create(Viewer.npc("demo", "berrit")),
    }
    async with serving(db) as base:
        yield Table(base, db, {who: token.token for who, (_, token) in made.items()})


def line(text: str, seconds: int, speaker: str = "Kael", **more: Any) -> dict[str, Any]:
    return {
        "utterance_id": f"u{seconds}",
        "speaker_id": speaker.lower(),
        "speaker_name": speaker,
        "text": text,
        "timestamp": (START + timedelta(seconds=seconds)).isoformat(),
        **more,
    }


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result.content)
    assert result.structured_content is not None
    return dict(result.structured_content)


async def hot(client: Client, npc: str) -> str:
    """The NPC's hot prompt block."""
    read = await client.read_resource(f"glyphoxa://npc/{npc}/hot")
    (content,) = read.contents
    assert isinstance(content, types.TextResourceContents)
    return str(json.loads(content.text)["prompt"])


async def found(client: Client, query: str) -> list[str]:
    result = await call(client, "memory.search_sessions", {"query": query, "session_id": "live"})
    return [r["text"] for r in result["results"]]


async def test_paths_and_tools_keep_recorders_and_npcs_apart(table: Table) -> None:
    for path, who in [
        ("/c/demo/record/mcp", "ysolde"),
        ("/c/demo/npc/ysolde/standard/mcp", "recorder"),
    ]:
        assert (await table.post(path, who)).status_code == 403
    assert (await table.post("/c/demo/record/mcp", None)).status_code == 401
    assert (await table.post("/c/nowhere/record/mcp", "recorder")).status_code == 403
    with anyio.fail_after(30):
        async with table.client("/c/demo/record/mcp", "recorder") as recorder:
            listed = {t.name for t in (await recorder.list_tools()).tools}
        async with table.client("/c/demo/npc/ysolde/deep/mcp", "ysolde") as npc:
            memory_tools = {t.name for t in (await npc.list_tools()).tools}
    assert listed == RECORDER_TOOLS
    assert not memory_tools & RECORDER_TOOLS


async def test_a_live_session_from_first_line_to_its_end(table: Table) -> None:
    updates: dict[str, anyio.Event] = {"ysolde": anyio.Event(), "berrit": anyio.Event()}

    def heard_by(npc: str) -> Any:
        async def on_message(message: object) -> None:
            if isinstance(message, types.ResourceUpdatedNotification):
                updates[npc].set()

        return on_message

    with anyio.fail_after(120):
        async with (
            table.client("/c/demo/record/mcp", "recorder") as recorder,
            table.client(
                "/c/demo/npc/ysolde/standard/mcp", "ysolde", message_handler=heard_by("ysolde")
            ) as ysolde,
            table.client(
                "/c/demo/npc/berrit/standard/mcp", "berrit", message_handler=heard_by("berrit")
            ) as berrit,
        ):
            for npc, client in (("ysolde", ysolde), ("berrit", berrit)):
                with pytest.warns(MCPDeprecationWarning):
                    await client.subscribe_resource(f"glyphoxa://npc/{npc}/hot")
            # The campaign is witnessed: the two NPCs at the table are present from the start.
            started = await call(
                recorder,
                "session.start",
                {
                    "session_id": "live",
                    "title": "Harbour night",
                    "started_at": START.isoformat(),
                    "present": ["Captain Ysolde", "Old Berrit"],
                },
            )
            assert started == {"session_id": "live", "new": True}

            appended = time.monotonic()
            result = await call(
                recorder,
                "transcript_append",  # the underscore spelling a voice API sends works too
                {
                    "session_id": "live",
                    "utterances": [
                        line("We should ask tar kwell about the missing cargo.", 0),
                        line("Dove wreck was seen at the docks at midnight.", 6, "Lyra"),
                    ],
                },
            )
            assert result["new"] == 2
            assert [u["new"] for u in result["utterances"]] == [True, True]
            for npc in ("ysolde", "berrit"):
                await updates[npc].wait()
            assert time.monotonic() - appended < 10
            assert "We should ask Tarquel about the missing cargo." in await hot(ysolde, "ysolde")

            # Searchable without anyone running `process`.
            while not any("Dovrek" in passage for passage in await found(berrit, "docks midnight")):
                await anyio.sleep(0.1)
            assert any("Tarquel" in p for p in await found(ysolde, "missing cargo"))

            again = await call(
                recorder,
                "transcript.append",
                {"session_id": "live", "utterances": [line("We should ask tar kwell", 0)]},
            )
            assert again["new"] == 0 and again["utterances"][0]["new"] is False

            bad = await recorder.call_tool(
                "transcript.append",
                {"session_id": "live", "utterances": [line("ok", 9), {"speaker_id": "x"}]},
            )
            assert bad.is_error and "utterances[1].speaker_name is required" in text_of(bad.content)
            stray = await recorder.call_tool(
                "session_facts.set",
                {"session_id": "live", "key": "k", "text": "t", "visible_to": "all"},
            )
            assert stray.is_error and "unknown argument 'visible_to'" in text_of(stray.content)
            assert "validation error" not in text_of(stray.content)

            await call(
                recorder,
                "session_facts.set",
                {
                    "session_id": "live",
                    "key": "disguise",
                    "text": "The party wears merchant robes.",
                },
            )
            await call(
                recorder,
                "session_facts.set",
                {
                    "session_id": "live",
                    "key": "bribe",
                    "text": "Kael slipped Berrit two silver.",
                    "npc_id": "berrit",
                },
            )
            assert "## This session\nThe party wears merchant robes." in await hot(ysolde, "ysolde")
            assert "two silver" not in await hot(ysolde, "ysolde")
            assert "Kael slipped Berrit two silver." in await hot(berrit, "berrit")
            cleared = await call(
                recorder, "session_facts.clear", {"session_id": "live", "key": "disguise"}
            )
            assert cleared == {"session_id": "live", "key": "disguise", "cleared": True}
            assert "merchant robes" not in await hot(ysolde, "ysolde")

            ended = await call(recorder, "session.end", {"session_id": "live", "wait": True})
            assert ended == {"session_id": "live", "state": "ended"}
            assert "two silver" not in await hot(berrit, "berrit")
            summary = await call(berrit, "memory.get_session_summary", {"session_id": "live"})
            assert "Tarquel" in summary["summary"]
    stored = await table.db.pool.fetchval(
        "SELECT count(*) FROM session_entries WHERE campaign_id = 'demo' AND session_id = 'live'"
    )
    assert stored == 2  # the rejected batch stored nothing
