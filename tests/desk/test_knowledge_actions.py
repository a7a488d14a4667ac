"""The DM's writes through the desk: what the DM states is confirmed unless given less than
full confidence, an entity's id is never taken over, review settles all items or none, and a
session being recorded into is not deleted."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.app import App
from glyphoxa_mcp.config import Settings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk import review_actions
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.desk.entity_actions import add_entity, relate
from glyphoxa_mcp.desk.fact_actions import add_fact
from glyphoxa_mcp.desk.session_actions import (
    delete_session,
    ingest_transcript,
    read_transcript,
    recording_into,
)
from glyphoxa_mcp.domain.models import NewEntity, Visibility, build
from glyphoxa_mcp.domain.review_items import ReviewItem
from glyphoxa_mcp.domain.rumours import dm_statement
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import ConflictError, InvalidInputError, NotFoundError
from glyphoxa_mcp.providers.embeddings import offline_embedder
from glyphoxa_mcp.storage.memory import CampaignMemory

START = datetime(2024, 5, 1, 19, 0, tzinfo=UTC)


async def two_npcs(desk: CampaignDesk) -> tuple[str, str]:
    mara = await add_entity(desk, build(NewEntity, name="Mara", type=EntityType.NPC))
    vask = await add_entity(desk, build(NewEntity, name="Vask", type=EntityType.NPC))
    return mara.id, vask.id


def test_what_the_dm_states_is_confirmed_unless_given_less_than_full_confidence() -> None:
    assert dm_statement().dm_confirmed
    assert dm_statement(1.0, "s1").session_id == "s1"
    doubted = dm_statement(0.4)
    assert (doubted.source, doubted.confidence, doubted.dm_confirmed) == ("dm", 0.4, False)
    with pytest.raises(InvalidInputError):
        dm_statement(1.5)


async def test_adding_an_entity_whose_id_is_taken_changes_nothing(memory: CampaignMemory) -> None:
    desk = CampaignDesk(memory)
    await add_entity(desk, build(NewEntity, name="Mara", type=EntityType.NPC))
    with pytest.raises(InvalidInputError, match="'mara' exists already") as refused:
        await add_entity(desk, build(NewEntity, name="Mara", type=EntityType.LOCATION))
    assert refused.value.field == "id"
    assert (await memory.graph.get_entity("mara")).type is EntityType.NPC


async def test_a_doubted_statement_waits_for_review_and_a_certain_one_does_not(
    memory: CampaignMemory,
) -> None:
    desk = CampaignDesk(memory)
    mara, vask = await two_npcs(desk)
    certain = await relate(desk, mara, "KNOWS", vask)
    doubted = await add_fact(
        desk,
        vask,
        "Vask owes the smugglers.",
        session_id="s1",
        confidence=0.5,
        visibility=Visibility(secret=True, known_by=(mara,)),
    )
    assert certain.provenance.dm_confirmed
    assert doubted.provenance.session_id == "s1"
    waiting = await review_actions.waiting_for_review(desk)
    assert [f.id for f in waiting.queue.facts] == [doubted.id]
    assert waiting.queue.relationships == ()
    assert waiting.threshold == 0.7
    with pytest.raises(NotFoundError):
        await add_fact(desk, vask, "From a session never held.", session_id="s9")


async def test_confirming_several_items_settles_all_of_them_or_none(
    memory: CampaignMemory,
) -> None:
    desk = CampaignDesk(memory)
    _, vask = await two_npcs(desk)
    rumour = await add_fact(desk, vask, "Vask sank the Gull.", confidence=0.3)
    gone = ReviewItem(kind="fact", id=rumour.id + 1000)
    with pytest.raises(NotFoundError):
        await review_actions.reject(desk, [ReviewItem(kind="fact", id=rumour.id), gone])
    assert [f.id for f in (await review_actions.waiting_for_review(desk)).queue.facts] == [
        rumour.id
    ]
    await review_actions.confirm(desk, [ReviewItem(kind="fact", id=rumour.id)])
    assert (await review_actions.waiting_for_review(desk)).queue.facts == ()
    assert (await memory.graph.get_fact(rumour.id)).provenance.dm_confirmed


async def test_a_session_being_recorded_into_is_not_deleted_until_the_recorder_lets_go(
    db256: Database,
) -> None:
    app = App(Settings(), db256, offline_embedder(db256.embedding_dim), chat=None)
    async with recording_into(app, "salt", "live"):
        transcript = read_transcript("Kael: We sail at dawn.\n", "live.txt", START)
        await ingest_transcript(db256, "salt", "live", transcript)
        desk = await CampaignDesk.of(app, "salt")
        with pytest.raises(ConflictError, match="is being recorded into"):
            await delete_session(desk, "live")
    assert (await delete_session(desk, "live")).lines == 1
