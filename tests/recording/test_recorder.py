"""Recording a session while it is played, through the recorder service."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from glyphoxa_mcp.app import App
from glyphoxa_mcp.domain.models import SearchFilters
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.providers.chat import ChatModel, ChatSettings
from glyphoxa_mcp.recording.utterances import (
    ReplayedUtterance,
    SpokenUtterance,
    StoredUtterance,
)
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.providers.fake_openai import chat, serve
from tests.recording.conftest import recording

START = datetime(2026, 3, 1, 19, tzinfo=UTC)


def said(
    text: str, seconds: float, utterance_id: str | None = None, **more: object
) -> SpokenUtterance:
    return SpokenUtterance.model_validate(
        {
            "utterance_id": utterance_id,
            "speaker_id": "p1",
            "speaker_name": "Kael",
            "text": text,
            "timestamp": START + timedelta(seconds=seconds),
            **more,
        }
    )


async def test_appended_lines_come_back_corrected_and_a_repeat_is_not_new(
    app: App, village: CampaignMemory
) -> None:
    async with recording(app) as recorder:
        await recorder.start("ashfall", "live", title="Live night", started_at=START)
        first = await recorder.append(
            "ashfall",
            "live",
            [said("we ask grim jaw about it", 0, "u1"), said("and then?", 4, "u2")],
        )
        assert all(isinstance(r, StoredUtterance) for r in first)
        stored_now = [r for r in first if isinstance(r, StoredUtterance)]
        assert [(r.text, r.new) for r in stored_now] == [
            ("we ask Grimjaw about it", True),
            ("and then?", True),
        ]
        assert [(c.heard, c.entity_id) for c in stored_now[0].corrections] == [
            ("grim jaw", "grimjaw")
        ]
        again = await recorder.append(
            "ashfall", "live", [said("we ask grim jaw about it", 0, "u1")]
        )
        assert again == [ReplayedUtterance(utterance_id="u1")]
        stored = await village.log.entries("live")
        assert [(e.text, e.raw_text) for e in stored] == [
            ("we ask Grimjaw about it", "we ask grim jaw about it"),
            ("and then?", "and then?"),
        ]


async def test_an_append_to_a_session_never_started_stores_nothing(
    app: App, village: CampaignMemory
) -> None:
    async with recording(app) as recorder:
        with pytest.raises(NotFoundError, match="session_id: no session 'nope'"):
            await recorder.append("ashfall", "nope", [said("hello", 0)])
        with pytest.raises(InvalidInputError, match="at least one"):
            await recorder.append("ashfall", "s1", [])
        assert await village.log.entries("s1") == []


async def test_a_line_is_searchable_without_anyone_running_process(
    app: App, village: CampaignMemory
) -> None:
    async with recording(app) as recorder:
        await recorder.start("ashfall", "live")
        await recorder.append(
            "ashfall",
            "live",
            [said("The ferryman wants three silver coins for the crossing.", 0, "f1")],
        )
        await recorder.searchable("ashfall", "live")
        found = await village.index.search_text("ferryman silver", SearchFilters(session_id="live"))
        assert [m.chunk.entry_ids for m in found] != []
        await recorder.append("ashfall", "live", [said("Fine, we pay the toll.", 5, "f2")])
        await recorder.searchable("ashfall", "live")
        contents = [m.chunk.content for m in await village.index.search_text("toll")]
        assert contents == [
            "Kael: The ferryman wants three silver coins for the crossing.\n"
            "Kael: Fine, we pay the toll."
        ]
        # The one-line passage the second line grew out of is gone.
        assert len(await village.index.stored_hashes("live")) == 1


@pytest.mark.slow
async def test_session_facts_are_shown_to_their_npc_and_go_when_the_session_ends(
    app: App, village: CampaignMemory
) -> None:
    async with recording(app) as recorder:
        await recorder.start("ashfall", "live")
        await recorder.append("ashfall", "live", [said("We put on the merchants' robes.", 0)])
        await recorder.set_fact(
            "ashfall", "live", "disguise", "The party is disguised as merchants.", None
        )
        await recorder.set_fact("ashfall", "live", "debt", "Kael owes Mira a favour.", "mira")
        await recorder.set_fact(
            "ashfall", "live", "cult", "The Cult watches the merchants' road.", None
        )
        facts = village.session_facts
        assert [f.key for f in await facts.shown_to("live", "grimjaw")] == ["disguise", "cult"]
        assert [f.key for f in await facts.shown_to("live", "mira")] == ["disguise", "debt", "cult"]
        mira = await (await View.open(village, "mira")).hot_context("mira", "live")
        assert mira.session_facts.text.splitlines() == [
            "The party is disguised as merchants.",
            "Kael owes Mira a favour.",
        ]  # not the line naming the Cult, which Mira may not know of
        assert "## This session\nThe party is disguised as merchants." in mira.prompt
        vask = await (await View.open(village, "vask")).hot_context("vask", "live")
        assert vask.session_facts.text.splitlines() == [
            "The party is disguised as merchants.",
            "The Cult watches the merchants' road.",
        ]
        with pytest.raises(InvalidInputError, match="npc_id"):
            await recorder.set_fact("ashfall", "live", "x", "text", "red-kettle")
        await recorder.clear_facts("ashfall", "live", "nope")  # not there: cleared already
        await recorder.clear_facts("ashfall", "live", "debt")
        assert [f.key for f in await facts.of_session("live")] == ["disguise", "cult"]
        mira = await (await View.open(village, "mira")).hot_context("mira", "live")
        assert "favour" not in mira.prompt

        ending = await recorder.end("ashfall", "live")
        assert ending.state.state == "ending"
        await ending.done.wait()
        assert ending.state.model_dump() == {"session_id": "live", "state": "ended"}
        assert (await village.sessions.get("live")).summary_source == "extractive"
        assert await facts.of_session("live") == []
        assert (await village.sessions.get("live")).ended_at is not None


@pytest.mark.slow
async def test_with_an_llm_a_scene_is_extracted_when_a_pause_closes_it(
    app: App, village: CampaignMemory
) -> None:
    reply = {
        "entities": [{"name": "Osric", "type": "npc", "confidence": 0.9}],
        "relationships": [
            {"subject": "Vask", "type": "MEMBER_OF", "object": "Cult", "confidence": 1.0}
        ],
        "facts": [],
    }
    with serve(chat(json.dumps(reply))) as fake:
        llm = ChatModel(ChatSettings(base_url=fake.base_url, model="m"))
        async with recording(dataclasses.replace(app, chat=llm)) as recorder:
            await recorder.start("ashfall", "live")
            await recorder.append(
                "ashfall", "live", [said("Osric the ferryman waves.", 0), said("Hello!", 5)]
            )
            await recorder.searchable("ashfall", "live")
            assert fake.requests == []  # the scene is still open
            await recorder.append("ashfall", "live", [said("Later, at the inn.", 900)])
            with anyio.fail_after(30):
                while len(await village.log.unextracted("live")) > 1:
                    await anyio.sleep(0.05)
        assert len(fake.requests) == 1
    transcript = json.loads(fake.requests[0]["messages"][1]["content"])["transcript"]
    # The closed scene's lines only, numbered so the model can cite the line a fact is from.
    assert transcript == "[1] Kael: Osric the ferryman waves.\n[2] Kael: Hello!"
    assert (await village.graph.get_entity("osric")).name == "Osric"
    # Saying a secret again never makes it public.
    (cult,) = [r for r in await village.graph.relationships_of("vask") if r.rel_type == "MEMBER_OF"]
    assert cult.visibility.known_by == ("vask",)


async def test_a_session_started_without_a_time_starts_now_and_keeps_an_earlier_start(
    app: App, village: CampaignMemory
) -> None:
    async with recording(app) as recorder:
        before = datetime.now(UTC)
        await recorder.start("ashfall", "live", title="Live night")
        started = (await village.sessions.get("live")).started_at
        assert started is not None and before <= started <= datetime.now(UTC)

        await recorder.start("ashfall", "live", started_at=START)
        assert (await village.sessions.get("live")).started_at == START
        await recorder.start("ashfall", "live")
        assert (await village.sessions.get("live")).started_at == START


@pytest.mark.slow
async def test_a_line_said_before_the_start_moves_the_start_back_so_the_session_can_end(
    app: App, village: CampaignMemory
) -> None:
    async with recording(app) as recorder:
        await recorder.start("ashfall", "live")  # now; the lines below were said in March
        await recorder.append("ashfall", "live", [said("we ask grim jaw", 5), said("and?", 9)])
        assert (await village.sessions.get("live")).started_at == START + timedelta(seconds=5)

        await recorder.append("ashfall", "live", [said("first of all", 1)])
        assert (await village.sessions.get("live")).started_at == START + timedelta(seconds=1)

        ending = await recorder.end("ashfall", "live")
        with anyio.fail_after(60):
            await ending.done.wait()
        assert ending.state.state == "ended"
        assert (await village.sessions.get("live")).ended_at == START + timedelta(seconds=9)
