"""Facts: adding one, listing them, a fact with the versions it replaced, retconning it, and
the transcript line each was said in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.models import (
    MAX_QUERY_CHARS,
    Entry,
    Fact,
    NewFact,
    SearchFilters,
    Visibility,
    build,
)
from glyphoxa_mcp.domain.rumours import RumourRule, dm_statement
from glyphoxa_mcp.pipeline.fact_embedding import embed_new


@dataclass(frozen=True)
class SourceLine:
    """Where a fact was said: the line extraction cited for it, or (`cited` False) for a
    fact that cites none (the DM's, an import's, or one from before lines were cited) the
    line of its session whose words match it best, a guess."""

    entry: Entry
    cited: bool


async def add_fact(
    desk: CampaignDesk,
    subject_id: str,
    text: str,
    *,
    session_id: str | None = None,
    story_day: float | None = None,
    occurred_at: datetime | None = None,
    confidence: float = 1.0,
    visibility: Visibility | None = None,
) -> Fact:
    """The DM's fact about an entity (from a session, when given, which must exist),
    stored, then embedded."""
    if session_id:
        await desk.memory.sessions.get(session_id)
    stored = await desk.memory.graph.upsert_fact(
        build(
            NewFact,
            subject_id=subject_id,
            text=text,
            session_id=session_id,
            story_day=story_day,
            occurred_at=occurred_at,
            provenance=dm_statement(confidence, session_id),
            visibility=visibility or Visibility(),
        )
    )
    await embed_new(desk.db, await desk.write_embedder(), desk.campaign_id)
    return stored


async def list_facts(desk: CampaignDesk, subject_id: str | None = None) -> list[Fact]:
    """The current facts, about one entity if given."""
    if subject_id is not None:
        return await desk.memory.graph.facts_about(subject_id)
    return await desk.memory.graph.current_facts()


async def rumour_rule(desk: CampaignDesk) -> RumourRule:
    """The campaign's rumour rule (its review threshold)."""
    return RumourRule(threshold=(await desk.memory.campaign()).review_threshold)


async def get_fact(desk: CampaignDesk, fact_id: int) -> Fact:
    return await desk.memory.graph.get_fact(fact_id)


async def fact_history(desk: CampaignDesk, fact_id: int) -> list[Fact]:
    """A fact and every version it replaced, oldest first."""
    return await desk.memory.curation.history(fact_id)


async def retcon_fact(desk: CampaignDesk, fact_id: int, text: str) -> Fact:
    """The fact's text replaced by the DM's (confirmed); the old version is kept as history
    and no longer served. Stored first; the vector follows, or waits for the backfill."""
    new = await desk.memory.curation.retcon(fact_id, text)
    await embed_new(desk.db, await desk.write_embedder(), desk.campaign_id)
    return new


async def source_lines(desk: CampaignDesk, facts: Sequence[Fact]) -> dict[int, SourceLine | None]:
    """Each fact's source line by the fact's id (None when its session is unknown)."""
    log = desk.memory.log
    wanted = [f.provenance.entry_id for f in facts if f.provenance.entry_id is not None]
    cited = {e.id: e for e in await log.get_many(wanted)} if wanted else {}
    found: dict[int, SourceLine | None] = {}
    for fact in facts:
        entry_id = fact.provenance.entry_id
        entry = cited.get(entry_id) if entry_id is not None else None
        found[fact.id] = SourceLine(entry, cited=True) if entry else await _guessed(desk, fact)
    return found


async def _guessed(desk: CampaignDesk, fact: Fact) -> SourceLine | None:
    session_id = fact.session_id or fact.provenance.session_id
    if session_id is None:
        return None
    matches = await desk.memory.log.search(
        fact.text[:MAX_QUERY_CHARS], SearchFilters(session_id=session_id), limit=1
    )
    return SourceLine(matches[0].entry, cited=False) if matches else None
