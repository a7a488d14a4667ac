"""A session's scenes: stored and read in order, replaced by their start, kept whole when an
entity they name is deleted, gone with their session, and copied into a branch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewSession
from glyphoxa_mcp.domain.scenes import Scene, scene_of
from glyphoxa_mcp.storage.forking import fork_campaign
from glyphoxa_mcp.storage.memory import CampaignMemory

START = datetime(2026, 3, 7, 19, tzinfo=UTC)


async def sample_with_session(db: Database) -> CampaignMemory:
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db, file, "demo")
    memory = CampaignMemory(db, "demo")
    await memory.sessions.upsert(NewSession(id="s1", started_at=START))
    return memory


def scene(minute: int, location: str | None, *present: str, title: str | None = None) -> Scene:
    return Scene(
        session_id="s1",
        started_at=START + timedelta(minutes=minute),
        location_id=location,
        present=present,
        title=title,
    )


async def test_scenes_are_read_in_the_order_they_started_and_replaced_by_their_start(
    db: Database,
) -> None:
    memory = await sample_with_session(db)
    crossing = scene(30, "greywater-crossing", "berrit")
    await memory.scenes.record([crossing, scene(0, "red-kettle", "ysolde", title="At the inn")])
    await memory.scenes.record([scene(0, "red-kettle", "ysolde", "berrit", title="At the inn")])
    inn, later = await memory.scenes.of_session("s1")
    assert (inn.present, later.model_copy(update={"word": ()})) == (("ysolde", "berrit"), crossing)
    assert scene_of([inn, later], START + timedelta(minutes=29)) == inn
    assert scene_of([inn, later], START + timedelta(minutes=30)) == later
    assert scene_of([inn, later], START - timedelta(seconds=1)) is None


async def test_a_deleted_entity_is_named_in_no_scene_and_the_scenes_stay(db: Database) -> None:
    memory = await sample_with_session(db)
    await memory.scenes.record([scene(0, "red-kettle", "ysolde", "berrit")])
    await memory.graph.delete_entity("berrit")
    await memory.graph.delete_entity("red-kettle")
    [kept] = await memory.scenes.of_session("s1")
    assert (kept.location_id, kept.present) == (None, ("ysolde",))


async def test_a_branch_copies_the_scenes_of_the_sessions_it_keeps(db: Database) -> None:
    memory = await sample_with_session(db)
    await memory.scenes.record([scene(0, "red-kettle", "ysolde", "berrit", title="At the inn")])
    await fork_campaign(db, "demo", "what-if")
    [copied] = await CampaignMemory(db, "what-if").scenes.of_session("s1")
    assert copied == (await memory.scenes.of_session("s1"))[0]


async def test_scenes_read_for_one_npc_say_only_whether_word_reached_it(db: Database) -> None:
    memory = await sample_with_session(db)
    await memory.scenes.record(
        [scene(0, "greywater-crossing", "ysolde"), scene(5, "red-kettle", "brannoch")]
    )
    whole = await memory.scenes.of_session("s1")
    assert len(whole[0].word) >= 1 and len(whole[1].word) > 1
    for npc in ("brannoch", "ilvenna", "ysolde", "berrit", "nobody"):
        narrowed = await memory.scenes.of_session("s1", word_of=npc)
        for one, full in zip(narrowed, whole, strict=True):
            assert one.heard_of_by(npc) == full.heard_of_by(npc)
            assert {hearer for hearer, _ in one.word} <= {npc}
            assert one.model_copy(update={"word": full.word}) == full
