"""A session's summary as the DM writes it, and the copy its episode keeps.

The episode entity of an ended session holds the summary too (NPCs read it there), so a
summary written again (by the DM, or without a line marked DM-only) is written to both in
the same transaction.
"""

from __future__ import annotations

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.episodes import episode_id
from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.models import MAX_SUMMARY_CHARS, NewEntity, Session
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.memory import CampaignMemory


async def write_dm_summary(db: Database, campaign_id: str, session_id: str, text: str) -> Session:
    """The DM's own summary of the session, kept by later line marks (it is the DM's)."""
    summary = text.strip()
    if not summary:
        raise InvalidInputError("The summary is blank.", field="summary")
    if len(summary) > MAX_SUMMARY_CHARS or "\x00" in summary:
        raise InvalidInputError(
            f"The summary must be at most {MAX_SUMMARY_CHARS} characters, without NUL characters.",
            field="summary",
        )
    async with db.transaction() as tx:
        memory = CampaignMemory(tx, campaign_id)
        session = await memory.sessions.set_summary(session_id, summary, "dm")
        # The DM's summary is one whole: the parts made from the lines no longer tell it.
        await memory.summary_parts.replace(session_id, [])
        await set_episode_summary(memory, session_id, summary)
    return session


async def set_episode_summary(memory: CampaignMemory, session_id: str, summary: str) -> None:
    """The episode's copy of the summary (a session not ended yet has no episode). In a
    witnessed campaign the episode, which every NPC may know, holds none: each NPC reads
    the part it may know through memory.get_session_summary."""
    if (await memory.campaign()).knowledge is not Knowledge.SHARED:
        return
    try:
        episode = await memory.graph.get_entity(episode_id(session_id))
    except NotFoundError:
        return
    await memory.graph.upsert_entity(
        NewEntity(
            id=episode.id,
            type=episode.type,
            name=episode.name,
            aliases=episode.aliases,
            attributes={**episode.attributes, "summary": summary},
        ),
        keep_visibility=True,
    )
