from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.domain.models import NewFact, NewSession
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.server.conftest import Connect, call, call_error
from tests.storage.graph_fixtures import build_village

TOOL = "memory.get_session_summary"


def at(day: int) -> datetime:
    return datetime(2026, 3, day, 22, tzinfo=UTC)


@pytest.fixture(autouse=True)
async def sessions(memory: CampaignMemory) -> None:
    await build_village(memory)
    await memory.sessions.upsert(NewSession(id="s1", started_at=at(1)))
    await memory.sessions.end("s1", at(1))
    await memory.sessions.set_summary(
        "s1", "The party met Grimjaw. Vask was seen entering the Cult's cellar.", "extractive"
    )
    await memory.sessions.upsert(NewSession(id="s2", title="Into the Cult", started_at=at(8)))
    await memory.sessions.end("s2", at(8))
    await memory.sessions.set_summary("s2", "They fled the town.", "dm")
    await memory.sessions.upsert(NewSession(id="s3", started_at=at(15)))
    await memory.graph.upsert_fact(NewFact(subject_id="mira", text="Mira joined.", session_id="s1"))


async def test_the_last_finished_session_is_the_default(connect: Connect) -> None:
    async with connect() as client:
        last = await call(client, TOOL)
        before = await call(client, TOOL, sessions_ago=2)
    assert last["session_id"] == "s2" and last["summary"] == "They fled the town."
    assert last["summary_source"] == "dm" and last["title"] == "Into the Cult"
    assert before["session_id"] == "s1"
    assert {e["id"] for e in before["entities"]} >= {"mira"}


async def test_a_session_asked_by_id_is_the_same_as_asked_by_how_long_ago(
    connect: Connect,
) -> None:
    """The DM's entities of a session asked for by id are read beside the session: the same
    answer as when the session is found first."""
    async with connect() as client:
        by_id = await call(client, TOOL, session_id="s1")
        by_age = await call(client, TOOL, sessions_ago=2)
    assert by_id == by_age
    assert {e["id"] for e in by_id["entities"]} >= {"mira"}


async def test_a_session_without_a_summary_says_so(connect: Connect) -> None:
    async with connect() as client:
        running = await call(client, TOOL, session_id="s3")
    assert running["summary"] is None and "no summary yet" in running["note"]


async def test_an_unknown_session_lists_valid_ids(connect: Connect) -> None:
    async with connect() as client:
        error = await call_error(client, TOOL, session_id="s99")
        both = await call_error(client, TOOL, session_id="s1", sessions_ago=1)
        too_far = await call_error(client, TOOL, sessions_ago=7)
        zero = await call_error(client, TOOL, sessions_ago=0)
    assert "No session 's99'" in error and "s1, s2, s3" in error
    assert "not both" in both
    assert "fewer than 7 finished sessions" in too_far
    assert "sessions_ago must be 1 or more" in zero


async def test_an_npc_never_reads_what_it_may_not_know(connect: Connect) -> None:
    async with connect(npc_id="mira") as client:
        first = await call(client, TOOL, session_id="s1")
        second = await call(client, TOOL, session_id="s2")
    assert first["summary"] == "The party met Grimjaw."
    assert "redacted_sentences" not in first  # no count of what was left out
    assert second["title"] is None  # "Into the Cult" names a secret
    async with connect(npc_id="vask") as client:
        vask = await call(client, TOOL, session_id="s1")
    assert "Cult's cellar" in vask["summary"]
