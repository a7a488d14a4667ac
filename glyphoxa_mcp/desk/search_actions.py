"""Search across everything the DM keeps: entities by name or alias, facts and relationships
(and lore) as `memory.search_facts` ranks them in the DM's view, transcript lines by their
words, and sessions by title or summary."""

from __future__ import annotations

from dataclasses import dataclass

from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.models import Entity, Entry, Session
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.results import FactHit
from glyphoxa_mcp.views.view import View


@dataclass(frozen=True)
class Found:
    entities: list[Entity]
    facts: list[FactHit]
    lines: list[Entry]
    sessions: list[Session]


async def search_everything(desk: CampaignDesk, query: str, per_kind: int) -> Found:
    """At most `per_kind` of each kind, best first."""
    memory = desk.memory
    view = await View.open(memory, None, desk.embedder())
    holding = query.casefold()
    return Found(
        entities=await memory.graph.find_entities(name=query, limit=per_kind),
        facts=(await view.search_facts(query, clamp(per_kind, per_kind))).results,
        lines=[m.entry for m in await memory.log.search(query, limit=per_kind)],
        sessions=[
            s
            for s in await memory.sessions.list()
            if holding in f"{s.id} {s.title or ''} {s.summary or ''}".casefold()
        ][:per_kind],
    )
