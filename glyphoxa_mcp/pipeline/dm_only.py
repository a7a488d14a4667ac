"""Keeping transcript lines, or whole sessions, to the DM (`secret mark line:ID|session:ID`).

A line can state a secret without naming anything hidden ("Tarquel paid the smugglers…"):
no rule on its words would catch it, so the DM marks it. What was made from the session
before the mark follows it: an ended session's extractive summary is written again without
the line (an LLM one too, and the session then waits for `session end --retry-llm` to have
the LLM write it again), and so is its episode's copy. A DM-only session's episode and what
it taught (facts and relationships sourced from it) become secret; revealing the session
again shows its episode, while the facts stay secret until the DM reveals each.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.episodes import episode_id
from glyphoxa_mcp.domain.models import Entry, Session, Visibility
from glyphoxa_mcp.domain.reports import LinesMarked, SessionMarked
from glyphoxa_mcp.domain.session_summaries import render_summary
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.pipeline.dm_summary import set_episode_summary
from glyphoxa_mcp.pipeline.summary import summarise
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.storage.memory import CampaignMemory


async def mark_lines(
    db: Database, campaign_id: str, entry_ids: Sequence[int], dm_only: bool
) -> LinesMarked:
    async with db.transaction() as tx:
        memory = CampaignMemory(tx, campaign_id)
        lines = await memory.log.set_dm_only(entry_ids, dm_only)
        rewritten, waiting = [], []
        for session_id in sorted({line.session_id for line in lines}):
            session = await memory.sessions.get(session_id)
            # A summary the DM wrote is the DM's; a running session has none yet.
            if session.ended_at is None or session.summary_source in (None, "dm"):
                continue
            await _rewrite_summary(memory, session)
            rewritten.append(session_id)
            if session.summary_source == "llm" or session.llm_pending:
                waiting.append(session_id)
    return LinesMarked(tuple(lines), tuple(rewritten), tuple(waiting))


async def _rewrite_summary(memory: CampaignMemory, session: Session) -> None:
    readable = [e for e in await memory.log.entries(session.id) if not e.dm_only]
    summary = await write_offline_summary(memory, session.id, readable)
    was_llm = session.summary_source == "llm" or session.llm_pending
    await memory.sessions.set_summary(session.id, summary, "extractive", llm_pending=was_llm)
    await set_episode_summary(memory, session.id, summary)


async def write_offline_summary(
    memory: CampaignMemory,
    session_id: str,
    entries: Sequence[Entry],
    embedder: Embedder | None = None,
) -> str:
    """The offline summary of `entries` (naming the campaign's entities, not the session's
    own episode), its parts stored; the text returned for the caller to store with its
    source. Without an `embedder`, its sentences are weighed by their words."""
    known = [e for e in await memory.queries.entity_names() if e.id != episode_id(session_id)]
    scenes = await memory.scenes.of_session(session_id)
    parts = await summarise(
        entries, scenes, embedder, NamePattern.of_entities(known), {e.id: e.name for e in known}
    )
    await memory.summary_parts.replace(session_id, parts)
    return render_summary(parts)


async def mark_session(
    db: Database, campaign_id: str, session_id: str, dm_only: bool
) -> SessionMarked:
    async with db.transaction() as tx:
        memory = CampaignMemory(tx, campaign_id)
        session = await memory.sessions.set_dm_only(session_id, dm_only)
        episode = episode_id(session_id)
        if dm_only:
            hidden = await memory.curation.hide_learned_in(session_id, episode)
            return SessionMarked(session, hidden)
        with contextlib.suppress(NotFoundError):  # a session not ended has no episode yet
            await memory.curation.set_visibility("entity", episode, Visibility())
    return SessionMarked(session, None)
