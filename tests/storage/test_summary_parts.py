"""A session's summary parts: stored in order and replaced whole, gone with their session,
copied into a branch with the sessions it keeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewSession
from glyphoxa_mcp.domain.session_summaries import SummaryPart
from glyphoxa_mcp.storage.deletion import delete_session
from glyphoxa_mcp.storage.forking import fork_campaign
from glyphoxa_mcp.storage.memory import CampaignMemory

START = datetime(2026, 3, 7, 19, tzinfo=UTC)
PARTS = [
    SummaryPart(scene_started_at=START, text="At the Kettle, Kael spoke.", gist="Kael talked."),
    SummaryPart(
        scene_started_at=START + timedelta(minutes=8),
        text="At the docks, Osric spoke.",
        gist="Osric talked at the docks.",
    ),
]


async def test_parts_are_read_in_order_and_replaced_whole(memory: CampaignMemory) -> None:
    assert await memory.summary_parts.parts_of("s1") == []
    await memory.summary_parts.replace("s1", PARTS)
    assert await memory.summary_parts.parts_of("s1") == PARTS
    whole = SummaryPart(text="They met.", gist="They met.")
    await memory.summary_parts.replace("s1", [whole])
    assert await memory.summary_parts.parts_of("s1") == [whole]
    await memory.summary_parts.replace("s1", [])
    assert await memory.summary_parts.parts_of("s1") == []


async def test_parts_go_with_their_session_and_are_copied_into_a_branch(
    db: Database, memory: CampaignMemory
) -> None:
    await memory.sessions.upsert(NewSession(id="s2", started_at=datetime(2100, 1, 1, tzinfo=UTC)))
    await memory.summary_parts.replace("s1", PARTS)
    await memory.summary_parts.replace("s2", PARTS[:1])
    await fork_campaign(db, "ashfall", "what-if", at_session="s1")
    branch = CampaignMemory(db, "what-if")
    assert await branch.summary_parts.parts_of("s1") == PARTS
    assert await branch.summary_parts.parts_of("s2") == []
    await delete_session(db, "ashfall", "s1")
    assert await memory.summary_parts.parts_of("s1") == []
    assert await branch.summary_parts.parts_of("s1") == PARTS
