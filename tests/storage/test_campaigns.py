from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewEntry, NewSession
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.status import database_status


def at(day: int, hour: int = 20) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=UTC)


async def test_ensure_creates_once_and_renames_on_request(db: Database) -> None:
    campaigns = Campaigns(db)
    created = await campaigns.ensure("ashfall")
    assert created.name == "ashfall"
    assert (await campaigns.ensure("ashfall", "Ashfall Reaches")).name == "Ashfall Reaches"
    assert (await campaigns.ensure("ashfall")).name == "Ashfall Reaches"
    assert [c.id for c in await campaigns.list()] == ["ashfall"]


async def test_bad_campaign_ids_name_the_field(db: Database) -> None:
    with pytest.raises(InvalidInputError) as caught:
        await Campaigns(db).ensure("no spaces allowed")
    assert caught.value.field == "id"


async def test_sessions_ago_counts_back_from_the_last_finished(memory: CampaignMemory) -> None:
    for number, day in [(2, 8), (3, 15), (4, 22)]:
        await memory.sessions.upsert(NewSession(id=f"s{number}", started_at=at(day)))
    await memory.sessions.end("s1", at(1, 23))
    await memory.sessions.end("s2", at(8, 23))
    await memory.sessions.end("s3", at(15, 23))
    # s4 is still running, so it is not "the last session".
    assert (await memory.sessions.finished(1)).id == "s3"
    assert (await memory.sessions.finished(3)).id == "s1"
    with pytest.raises(NotFoundError, match="fewer than 4 finished sessions"):
        await memory.sessions.finished(4)
    with pytest.raises(InvalidInputError):
        await memory.sessions.finished(0)


async def test_asking_for_the_last_finished_session_of_none_says_there_is_none(
    memory: CampaignMemory,
) -> None:
    with pytest.raises(NotFoundError, match=r"^Campaign 'ashfall' has no finished session\.$"):
        await memory.sessions.finished(1)


async def test_upserting_a_session_keeps_what_was_not_given(memory: CampaignMemory) -> None:
    await memory.sessions.upsert(NewSession(id="s1", started_at=at(1)))
    session = await memory.sessions.get("s1")
    assert session.title == "The Red Kettle" and session.started_at == at(1)
    summary = await memory.sessions.set_summary("s1", "They met Grimjaw.", "extractive")
    assert summary.summary_source == "extractive"


async def test_unknown_sessions_say_how_to_find_valid_ids(memory: CampaignMemory) -> None:
    with pytest.raises(NotFoundError, match="List the sessions"):
        await memory.sessions.get("s99")
    with pytest.raises(NotFoundError):
        await memory.sessions.end("s99", at(2))


async def test_a_session_a_viewer_may_not_read_is_no_row_like_one_that_does_not_exist(
    memory: CampaignMemory,
) -> None:
    await memory.sessions.upsert(NewSession(id="s2", title="The DM's prep"))
    await memory.sessions.set_dm_only("s2", True)
    readable = memory.sessions.readable
    assert (await readable("s1", (), npc=True)) == await memory.sessions.get("s1")
    assert await readable("s1", {"s1"}, npc=True) is None  # withheld from the NPC
    assert await readable("s2", (), npc=True) is None  # DM-only
    assert await readable("s99", (), npc=True) is None  # none such
    dm_only = await readable("s2", (), npc=False)
    assert dm_only is not None and dm_only.dm_only  # the DM's all the same


async def test_sessions_are_per_campaign(
    memory: CampaignMemory, other_campaign: CampaignMemory
) -> None:
    await memory.sessions.set_summary("s1", "Ashfall summary", "dm")
    assert (await other_campaign.sessions.get("s1")).summary is None
    assert [s.id for s in await other_campaign.sessions.list()] == ["s1"]


async def test_titles_are_read_for_the_sessions_asked_about(
    memory: CampaignMemory, other_campaign: CampaignMemory
) -> None:
    await memory.sessions.upsert(NewSession(id="s2", title="The Crossing"))
    await memory.sessions.upsert(NewSession(id="s4"))
    await other_campaign.sessions.upsert(NewSession(id="s3", title="Elsewhere"))
    assert await memory.sessions.titles(["s2", "s1", "s3", "s4", "nope"]) == {
        "s1": "The Red Kettle",
        "s2": "The Crossing",
        "s4": None,
    }
    assert await memory.sessions.titles([]) == {}


async def test_deleting_a_campaign_removes_everything_it_stored(
    db: Database, memory: CampaignMemory, other_campaign: CampaignMemory
) -> None:
    entry = NewEntry(speaker_id="m", speaker_name="Mira", text="hello", spoken_at=at(1))
    await memory.log.append("s1", entry)
    await other_campaign.log.append("s1", entry)
    assert await Campaigns(db).delete("ashfall")
    status = await database_status(db)
    assert [(c.id, c.sessions, c.entries) for c in status.campaigns] == [("frostmere", 1, 1)]


async def test_status_counts_rows_per_layer_and_campaign(
    db: Database, memory: CampaignMemory
) -> None:
    from tests.storage.graph_fixtures import FACTS, RELATIONSHIPS, build_village

    await build_village(memory)
    status = await database_status(db)
    [ashfall] = status.campaigns
    assert ashfall.entities == 8
    # ALLIED_WITH is stored both ways.
    assert ashfall.relationships == len(RELATIONSHIPS) + 1
    assert ashfall.facts == len(FACTS)
    assert status.schema_version >= 1 and status.pgvector_version.startswith("0.")


async def test_a_session_cannot_end_before_it_starts(memory: CampaignMemory) -> None:
    await memory.sessions.upsert(NewSession(id="s1", started_at=at(2)))
    with pytest.raises(InvalidInputError, match="session_ends_after_it_starts"):
        await memory.sessions.end("s1", at(1))
    assert (await memory.sessions.get("s1")).ended_at is None


async def test_a_session_start_only_moves_earlier(memory: CampaignMemory) -> None:
    await memory.sessions.upsert(NewSession(id="s1", started_at=at(7)))
    await memory.sessions.upsert(NewSession(id="s1", started_at=at(20)))
    assert (await memory.sessions.get("s1")).started_at == at(7)
    await memory.sessions.upsert(NewSession(id="s1", started_at=at(2)))
    assert (await memory.sessions.get("s1")).started_at == at(2)
