"""Where a fact was said: the line extraction cited for it, or, for a fact that cites none
(the DM's, an import's, or one from before lines were cited), the line of its session whose
words match it best, which the desk labels as a guess."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_mcp.domain.models import MAX_QUERY_CHARS, Entry, Fact, SearchFilters
from glyphoxa_mcp.storage.memory import CampaignMemory


@dataclass(frozen=True)
class SourceLine:
    entry: Entry
    cited: bool  # False: guessed from the fact's words


async def source_lines(
    memory: CampaignMemory, facts: Sequence[Fact]
) -> dict[int, SourceLine | None]:
    """Each fact's source line by the fact's id (None when its session is unknown)."""
    wanted = [f.provenance.entry_id for f in facts if f.provenance.entry_id is not None]
    cited = {e.id: e for e in await memory.log.get_many(wanted)} if wanted else {}
    found: dict[int, SourceLine | None] = {}
    for fact in facts:
        entry_id = fact.provenance.entry_id
        entry = cited.get(entry_id) if entry_id is not None else None
        found[fact.id] = SourceLine(entry, cited=True) if entry else await _guessed(memory, fact)
    return found


async def _guessed(memory: CampaignMemory, fact: Fact) -> SourceLine | None:
    session_id = fact.session_id or fact.provenance.session_id
    if session_id is None:
        return None
    matches = await memory.log.search(
        fact.text[:MAX_QUERY_CHARS], SearchFilters(session_id=session_id), limit=1
    )
    return SourceLine(matches[0].entry, cited=False) if matches else None
