"""The recorder endpoint writes and reads nothing: whoever holds a recorder token (a bridge's,
with guessable utterance ids such as u1, u2) learns nothing stored from its answers, not
even from replaying an id or starting a session that exists, the DM's own included
(issue 27). Nor does ending a session tell who took part, how it was summarised or why it
failed, nor clearing session facts which there were. Replaying still stores nothing twice,
which is what a bridge relies on, and ending and clearing do all they did."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from glyphoxa_mcp.app import App
from glyphoxa_mcp.domain.models import NewEntry, NewSession
from glyphoxa_mcp.errors import GlyphoxaError
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.server.recorder_server import build_recorder_server
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.recording.conftest import recording

START = datetime(2026, 3, 1, 19, tzinfo=UTC)
SECRET_TITLE = "The vault under the temple"
SECRET_LINE = "The vault code under the temple is 4471."


@contextlib.asynccontextmanager
async def recorder_client(
    app: App, heard: list[types.LoggingMessageNotificationParams] | None = None
) -> AsyncIterator[Client]:
    """A recorder's MCP client; what the server tells it in log notifications goes to
    `heard`."""

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        if heard is not None:
            heard.append(params)

    async with (
        recording(app) as recorder,
        Client(
            build_recorder_server(recorder, "ashfall"), mode="legacy", logging_callback=on_log
        ) as client,
    ):
        yield client


async def answer(client: Client, tool: str, **arguments: Any) -> tuple[dict[str, Any], str]:
    """A recorder tool's structured answer, and every word of the answer as sent."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result.content)
    assert result.structured_content is not None
    return result.structured_content, text_of(result.content) + json.dumps(
        result.structured_content
    )


def spoken(utterance_id: str | None, text: str, seconds: int) -> dict[str, Any]:
    return {
        "utterance_id": utterance_id,
        "speaker_id": "p1",
        "speaker_name": "Kael",
        "text": text,
        "timestamp": (START + timedelta(seconds=seconds)).isoformat(),
    }


async def the_dms_secret_session(memory: CampaignMemory) -> None:
    """A DM-only session holding a DM-only line stored under the utterance id 'u1'."""
    await memory.sessions.upsert(NewSession(id="prep", title=SECRET_TITLE, started_at=START))
    ids = await memory.log.append_many(
        "prep",
        [
            NewEntry(
                speaker_id="dm",
                speaker_name="DM",
                text=SECRET_LINE,
                spoken_at=START,
                source_key="utterance:u1",
            )
        ],
    )
    await memory.log.set_dm_only(ids, True)
    await memory.sessions.set_dm_only("prep", True)


async def test_a_replayed_utterance_id_is_acknowledged_by_that_id_alone(
    app: App, village: CampaignMemory
) -> None:
    await the_dms_secret_session(village)
    async with recorder_client(app) as client:
        replayed, words = await answer(
            client, "transcript.append", session_id="prep", utterances=[spoken("u1", "hi", 9)]
        )
    assert replayed == {
        "session_id": "prep",
        "new": 0,
        "utterances": [{"utterance_id": "u1", "new": False}],
    }
    for stored in (SECRET_LINE, "4471", START.isoformat()[:10], '"DM"', "entry_id"):
        assert stored not in words, stored
    assert [e.text for e in await village.log.entries("prep")] == [SECRET_LINE]


async def test_an_utterance_sent_again_without_an_id_is_acknowledged_with_nothing_stored(
    app: App, village: CampaignMemory
) -> None:
    async with recorder_client(app) as client:
        await answer(client, "session.start", session_id="live")
        first, _ = await answer(
            client, "transcript.append", session_id="live", utterances=[spoken(None, "grim jaw", 0)]
        )
        again, words = await answer(
            client, "transcript.append", session_id="live", utterances=[spoken(None, "grim jaw", 0)]
        )
    assert first["utterances"] == [{"utterance_id": None, "new": True}]
    assert again == {
        "session_id": "live",
        "new": 0,
        "utterances": [{"utterance_id": None, "new": False}],
    }
    assert "Grimjaw" not in words


async def test_resending_after_a_lost_answer_neither_loses_nor_duplicates_a_line(
    app: App, village: CampaignMemory
) -> None:
    async with recorder_client(app) as client:
        await answer(client, "session.start", session_id="live")
        await answer(
            client,
            "transcript.append",
            session_id="live",
            utterances=[spoken("u1", "first", 0), spoken("u2", "second", 5)],
        )
        # The bridge never heard the answer, so it sends the whole buffer again, and more.
        resent, _ = await answer(
            client,
            "transcript.append",
            session_id="live",
            utterances=[
                spoken("u1", "first", 0),
                spoken("u2", "second", 5),
                spoken("u3", "third", 9),
            ],
        )
    assert [(u["utterance_id"], u["new"]) for u in resent["utterances"]] == [
        ("u1", False),
        ("u2", False),
        ("u3", True),
    ]
    assert resent["new"] == 1
    assert [e.text for e in await village.log.entries("live")] == ["first", "second", "third"]


async def test_starting_a_session_that_exists_tells_that_it_exists_and_nothing_more(
    app: App, village: CampaignMemory
) -> None:
    await the_dms_secret_session(village)
    async with recorder_client(app) as client:
        existing, words = await answer(client, "session.start", session_id="prep")
        fresh, _ = await answer(client, "session.start", session_id="night")
        # Starting it again still fills in what it lacked.
        titled, _ = await answer(client, "session.start", session_id="night", title="Harbour night")
    assert existing == {"session_id": "prep", "new": False}
    for stored in (SECRET_TITLE, "vault", START.isoformat()[:10], "started_at", "ended_at"):
        assert stored not in words, stored
    assert fresh == {"session_id": "night", "new": True}
    assert titled == {"session_id": "night", "new": False}
    assert (await village.sessions.get("night")).title == "Harbour night"
    assert (await village.sessions.get("prep")).title == SECRET_TITLE


# A line of the DM's session that names two NPCs (so ending it finds them taking part), and
# the DM's own facts of that session.
SHARED_LINE = "Grimjaw and Mira guard the vault under the temple."
DM_FACTS = {"vault-code": "The vault code is 4471.", "traitor": "Mira is the traitor."}


async def test_ending_a_session_tells_how_far_it_got_and_nothing_of_what_it_found(
    app: App, village: CampaignMemory
) -> None:
    await the_dms_secret_session(village)
    await village.log.append_many(
        "prep",
        [NewEntry(speaker_id="p1", speaker_name="Kael", text=SHARED_LINE, spoken_at=START)],
    )
    for key, text in DM_FACTS.items():
        await village.session_facts.set("prep", key, text, None)
    heard: list[types.LoggingMessageNotificationParams] = []
    async with recorder_client(app, heard) as client:
        with pytest.warns(MCPDeprecationWarning):
            await client.set_logging_level("info")
        ended, words = await answer(client, "session.end", session_id="prep", wait=True)
        with anyio.fail_after(10):
            while not heard:
                await anyio.sleep(0.01)
    assert ended == {"session_id": "prep", "state": "ended"}
    told = words + " ".join(str(h.data) for h in heard)
    for found in ("grimjaw", "mira", "participants", "extractive", "summary", *DM_FACTS):
        assert found not in told.lower(), found
    assert [str(h.data) for h in heard] == ["Session 'prep' has ended."]
    # It did all it did before: ended, summarised, remembered, its facts cleared.
    session = await village.sessions.get("prep")
    assert session.ended_at is not None and session.summary_source == "extractive"
    assert await village.session_facts.of_session("prep") == []


async def test_a_failed_ending_says_it_failed_and_not_why(
    app: App, village: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    await the_dms_secret_session(village)

    async def failing(*_args: Any, **_kwargs: Any) -> None:
        raise GlyphoxaError(f"could not summarise: {SECRET_LINE}")

    monkeypatch.setattr("glyphoxa_mcp.recording.recorder.end_session", failing)
    heard: list[types.LoggingMessageNotificationParams] = []
    async with recorder_client(app, heard) as client:
        failed, words = await answer(client, "session.end", session_id="prep", wait=True)
        with anyio.fail_after(10):
            while not heard:
                await anyio.sleep(0.01)
    assert failed == {"session_id": "prep", "state": "failed"}
    told = words + " ".join(str(h.data) for h in heard)
    for stored in (SECRET_LINE, "4471", "summarise", "error"):
        assert stored not in told, stored
    assert [(h.level, str(h.data)) for h in heard] == [
        (
            "error",
            "Ending session 'prep' failed (the server's log says why); call session.end "
            "again to retry.",
        )
    ]


async def test_clearing_session_facts_tells_that_it_is_done_and_nothing_of_what_there_was(
    app: App, village: CampaignMemory
) -> None:
    await the_dms_secret_session(village)
    for key, text in DM_FACTS.items():
        await village.session_facts.set("prep", key, text, None)
    async with recorder_client(app) as client:
        # A fact that is there and one that never was answer alike, byte for byte.
        one, one_words = await answer(
            client, "session_facts.clear", session_id="prep", key="traitor"
        )
        none, none_words = await answer(
            client, "session_facts.clear", session_id="prep", key="traitor"
        )
        left = [f.key for f in await village.session_facts.of_session("prep")]
        every, every_words = await answer(client, "session_facts.clear", session_id="prep")
        again, _ = await answer(client, "session_facts.clear", session_id="prep")
    assert one == none == {"session_id": "prep", "key": "traitor", "cleared": True}
    assert one_words == none_words
    assert every == again == {"session_id": "prep", "key": None, "cleared": True}
    assert "vault-code" not in every_words and "4471" not in every_words
    # The clearing itself is as before: the one asked for, then all of them.
    assert left == ["vault-code"]
    assert await village.session_facts.of_session("prep") == []


async def test_a_new_utterance_is_acknowledged_without_what_correction_made_of_it(
    app: App, village: CampaignMemory
) -> None:
    """Sending misheard names and reading back the corrected text would list the campaign's
    names, secret ones too: the answer is the utterance's id and that it is new."""
    async with recorder_client(app) as client:
        await answer(client, "session.start", session_id="live")
        stored, words = await answer(
            client,
            "transcript.append",
            session_id="live",
            utterances=[spoken("u7", "grim jaw was here", 0)],
        )
    assert stored == {
        "session_id": "live",
        "new": 1,
        "utterances": [{"utterance_id": "u7", "new": True}],
    }
    assert "Grimjaw" not in words and "grimjaw" not in words
    # It was corrected and stored all the same.
    assert [e.text for e in await village.log.entries("live")] == ["Grimjaw was here"]
