"""Where a fact was said: the line of its session that its words match best. A fact keeps the
session it came from, not the line, so the desk finds the line by the fact's words and says
so beside it."""

from __future__ import annotations

from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import MAX_QUERY_CHARS, Entry, Fact, SearchFilters


async def source_line(memory: CampaignMemory, fact: Fact) -> Entry | None:
    session_id = fact.session_id or fact.provenance.session_id
    if session_id is None:
        return None
    found = await memory.log.search(
        fact.text[:MAX_QUERY_CHARS], SearchFilters(session_id=session_id), limit=1
    )
    return found[0].entry if found else None
