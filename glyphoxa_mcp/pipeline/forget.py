"""Forgetting one line of a transcript (`transcript forget line:ID`, the review page).

In one transaction the line goes from L1 with the passages that held it
(storage/deletion.py), and the session's summary is flagged for the DM's review. A summary
the pipeline wrote (offline or by the LLM) may quote or retell the line, so it is written
again, offline, from the lines left (an LLM's is then marked for `session end --retry-llm`);
the DM's own summary is left for the DM. Then the session's passages are cut again from the
lines left and the missing ones embedded (as `process` does); when the embedder fails, the
line is forgotten all the same and `glyphoxa-mcp process SESSION` finishes the passages.
"""

from __future__ import annotations

from typing import Literal

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.reports import LineForgotten
from glyphoxa_mcp.errors import GlyphoxaError
from glyphoxa_mcp.pipeline.dm_only import write_offline_summary
from glyphoxa_mcp.pipeline.dm_summary import set_episode_summary
from glyphoxa_mcp.pipeline.process import index_passages
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.storage.deletion import flag_summary, remove_line
from glyphoxa_mcp.storage.memory import CampaignMemory


async def forget_line(
    db: Database, campaign_id: str, entry_id: int, embedder: Embedder
) -> LineForgotten:
    """Forget line `entry_id` of the campaign; see the module."""
    async with db.transaction() as tx:
        removed = await remove_line(tx, campaign_id, entry_id)
        summary, llm_pending = await _review_summary(
            CampaignMemory(tx, campaign_id), removed.session_id, embedder
        )
    memory = CampaignMemory(db, campaign_id)
    added, pending = 0, None
    try:
        entries = await memory.log.entries(removed.session_id)
        added = (await index_passages(memory, embedder, removed.session_id, entries)).embedded
    except GlyphoxaError as exc:
        pending = str(exc)
    return LineForgotten(
        campaign_id=campaign_id,
        entry_id=entry_id,
        session_id=removed.session_id,
        passages_removed=removed.passages_removed,
        passages_added=added,
        summary=summary,
        llm_pending=llm_pending,
        passages_pending=pending,
    )


async def _review_summary(
    memory: CampaignMemory, session_id: str, embedder: Embedder
) -> tuple[Literal["rewritten", "kept", "none"], bool]:
    session = await memory.sessions.get(session_id)
    if session.summary is None:
        return "none", session.llm_pending
    outcome: Literal["rewritten", "kept"] = "kept"
    llm_pending = session.llm_pending
    if session.summary_source != "dm":
        # As `session end` makes it offline: what the DM keeps to themselves left out.
        readable = [e for e in await memory.log.entries(session_id) if not e.dm_only]
        text = await write_offline_summary(memory, session_id, readable, embedder)
        llm_pending = llm_pending or session.summary_source == "llm"
        await memory.sessions.set_summary(session_id, text, "extractive", llm_pending=llm_pending)
        await set_episode_summary(memory, session_id, text)
        outcome = "rewritten"
    await flag_summary(memory.db, memory.campaign_id, session_id)
    return outcome, llm_pending
