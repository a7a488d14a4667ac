"""Search across everything the DM keeps, ranked by the words searched for: entities by name
or alias, facts and relationships (and lore) as `memory.search_facts` finds them in the DM's
view, transcript lines by their words, and sessions by title or summary. What holds more of
the words comes first; a relationship is listed only when its sentence holds one (every
short "X is at Y" lies near any query in meaning), and facts found by meaning alone are
kept apart, after those the words found."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.desk.word_match import WordQuery
from glyphoxa_mcp.domain.models import Entity, Entry, Session
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.results import FactHit
from glyphoxa_mcp.views.view import View

# Candidates asked for per result shown: ranking by words reorders and drops some.
CANDIDATES_PER_SHOWN = 3
# Entities are also looked up by each of the query's words, up to this many words.
WORDS_LOOKED_UP = 6


@dataclass(frozen=True)
class Found:
    entities: list[Entity]
    facts: list[FactHit]
    """Facts, relationships and lore holding the query's words, most of them first."""
    facts_by_meaning: list[FactHit]
    """Facts and lore near the query in meaning that hold none of its words."""
    lines: list[Entry]
    sessions: list[Session]


async def search_everything(desk: CampaignDesk, query: str, per_kind: int) -> Found:
    """At most `per_kind` of each kind, best first."""
    memory = desk.memory
    words = WordQuery.of(query)
    pool = CANDIDATES_PER_SHOWN * per_kind
    view = await View.open(memory, None, desk.embedder())
    hits = (await view.search_facts(query, clamp(pool, pool))).results
    facts = words.ranked(hits, _fact_words)
    shown = {(hit.kind, hit.id) for hit in facts}
    lines = [m.entry for m in await memory.log.search(query, limit=pool)]
    return Found(
        entities=words.ranked(await _entities(desk, query, words, pool), _entity_words)[:per_kind],
        facts=facts[:per_kind],
        facts_by_meaning=[
            hit for hit in hits if hit.kind != "relationship" and (hit.kind, hit.id) not in shown
        ][:per_kind],
        # Lines found by their stems the words above may not name: kept, after the rest.
        lines=_first(words.ranked(lines, _line_words), lines)[:per_kind],
        sessions=words.ranked(
            await memory.sessions.list(), lambda s: f"{s.id} {s.title or ''} {s.summary or ''}"
        )[:per_kind],
    )


async def _entities(desk: CampaignDesk, query: str, words: WordQuery, pool: int) -> list[Entity]:
    """Entities named like the whole query, then like each of its words."""
    graph = desk.memory.graph
    found = {e.id: e for e in await graph.find_entities(name=query, limit=pool)}
    for word in words.words[:WORDS_LOOKED_UP]:
        for entity in await graph.find_entities(name=word, limit=pool):
            found.setdefault(entity.id, entity)
    return list(found.values())


def _first(preferred: list[Entry], every: Iterable[Entry]) -> list[Entry]:
    ids = {entry.id for entry in preferred}
    return preferred + [entry for entry in every if entry.id not in ids]


def _entity_words(entity: Entity) -> str:
    return " ".join([entity.name, *entity.aliases])


def _fact_words(hit: FactHit) -> str:
    """A fact is about its subject as well as what it says; lore, about its headings."""
    return " ".join(
        part or "" for part in (hit.text, hit.subject_name, hit.heading, hit.document_title)
    )


def _line_words(entry: Entry) -> str:
    return f"{entry.speaker_name} {entry.text}"
