"""Searching facts, events and relationships by words, by meaning and through the graph,
with real and story-time filters, in a viewer's scope; and, when nothing narrows the search
to a subject, session or time (lore has none of them), the DM's lore passages beside them."""

from __future__ import annotations

import re

from glyphoxa_mcp.concurrency import concurrently, kept_in_slices
from glyphoxa_mcp.domain.models import Entity, Fact, FactMatch, Provenance, Relationship
from glyphoxa_mcp.domain.vocabulary import is_bidirectional
from glyphoxa_mcp.recall.fusion import reciprocal_rank_fusion
from glyphoxa_mcp.recall.relationship_sentences import relationship_sentence
from glyphoxa_mcp.recall.time_bounds import TimeBound, parse_time_bound
from glyphoxa_mcp.storage.fact_queries import FactFilters
from glyphoxa_mcp.storage.lore_queries import LoreMatch, LorePassage
from glyphoxa_mcp.views.arguments import present, search_query
from glyphoxa_mcp.views.limits import Clamped
from glyphoxa_mcp.views.names_ahead import keep_read, read_ahead
from glyphoxa_mcp.views.reading import Reader, Reading
from glyphoxa_mcp.views.results import (
    WORDS_ONLY_NOTE,
    CountLimit,
    EntityRef,
    FactHit,
    SearchFactsResult,
)
from glyphoxa_mcp.views.session_summary import known_session

CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 20
_WORD = re.compile(r"[a-z0-9]+")
# Words too common to say that a relationship is about the query.
_STOP = frozenset(
    _WORD.findall(
        "a an and are as at be by did do does for from had has have he her his how i in "
        "is it of on or she that the their them they this to was were what when where "
        "who why with you"
    )
)

Key = tuple[str, int]  # ("fact" | "relationship" | "lore", id)
# Rankings of their own beside the facts', and what each is reported as.
_LINK_MEANING = "relationship meaning"
_LORE_WORDS = "lore words"
_LORE_MEANING = "lore meaning"
_REPORTED_AS = {_LINK_MEANING: "meaning", _LORE_WORDS: "words", _LORE_MEANING: "meaning"}
# Lore is the DM's own writing: stated by the DM, not a rumour.
_LORE_PROVENANCE = Provenance(source="dm", confidence=1.0, dm_confirmed=True)


async def search_facts(
    reader: Reader,
    query: str,
    top_k: Clamped,
    entity: str | None,
    after: str | None,
    before: str | None,
    session_id: str | None,
) -> SearchFactsResult:
    result = SearchFactsResult(results=[], top_k=CountLimit.of(top_k), scope=reader.label)
    text = search_query(query)
    if text is None:
        return result.model_copy(update={"note": "The query is blank: nothing to search."})
    lower = parse_time_bound(after, "after")
    upper = parse_time_bound(before, "before")
    session_id = present(session_id, "session_id")
    reading = await reader.reading()
    scope = reading.scope
    withheld = await reading.withheld_sessions()
    if session_id is not None:
        await known_session(reading.memory, session_id, withheld, npc=reading.npc_id is not None)
    subject = None
    entity = present(entity, "entity")
    if entity is not None:
        matches = scope.names.match(entity, limit=1)
        if not matches:
            return result.model_copy(update={"note": f"No known entity matches {entity!r}."})
        subject = matches[0].entity
        result = result.model_copy(
            update={"entity": EntityRef(id=subject.id, name=subject.name, type=subject.type)}
        )
    filters = FactFilters(
        subject_ids=(subject.id,) if subject else None,
        session_id=session_id,
        real_after=lower.real if lower else None,
        real_before=upper.real if upper else None,
        story_after=lower.story_day if lower else None,
        story_before=upper.story_day if upper else None,
    )
    search = FactSearch(reading, filters, lower, upper, withheld)
    hits = await search.run(text, subject, top_k.used)
    note = WORDS_ONLY_NOTE if search.words_only else None if hits else "Nothing matched."
    return result.model_copy(update={"results": hits, "note": note})


class FactSearch:
    def __init__(
        self,
        reading: Reading,
        filters: FactFilters,
        lower: TimeBound | None,
        upper: TimeBound | None,
        withheld_sessions: frozenset[str] = frozenset(),
    ) -> None:
        self.reader = reading.reader
        self.memory = reading.memory
        self.withheld = withheld_sessions
        self.scope = reading.scope
        self.known = reading.scope.by_id
        self.filters = filters
        self.lower, self.upper = lower, upper
        self.words_only = False

    async def run(self, query: str, subject: Entity | None, wanted: int) -> list[FactHit]:
        facts = self.memory.facts
        pool = max(MIN_CANDIDATES, CANDIDATES_PER_RESULT * wanted)
        npc = self.reader.npc_id

        lore = self.memory.lore
        with_lore = self.filters == FactFilters()

        async def nearest() -> tuple[
            list[FactMatch], list[tuple[Relationship, float]], list[LoreMatch]
        ]:
            vector = await self.reader.embed_query_if_able(query)
            if vector is None:
                self.words_only = True
                return [], [], []
            near_facts, near_links, near_lore = await concurrently(
                lambda: facts.by_vector(vector, self.filters, k=pool, npc_id=npc),
                lambda: self._relationships_near(vector, pool),
                lambda: lore.by_vector(vector, k=pool, npc_id=npc) if with_lore else _none(),
            )
            return near_facts, near_links, near_lore

        (
            by_words,
            (by_meaning, links_by_meaning, lore_by_meaning),
            relationships,
            lore_by_words,
        ) = await concurrently(
            lambda: facts.by_text(query, self.filters, k=pool, npc_id=npc),
            nearest,
            lambda: self._relationships(query, subject),
            lambda: lore.by_text(query, k=pool, npc_id=npc) if with_lore else _none(),
        )
        # What the viewer may not read is left out before ranking, so that neither the
        # scores nor the order of the rest tell where it stood.
        to_keep = await read_ahead(
            self.memory,
            self.scope.redactor,
            {
                text: None
                for m in (*by_words, *by_meaning)
                for text in (m.fact.text, m.fact.story_label or "")
            },
        )
        by_words = await kept_in_slices(by_words, lambda m: self._readable(m.fact))
        by_meaning = await kept_in_slices(by_meaning, lambda m: self._readable(m.fact))
        await keep_read(self.memory, to_keep)
        lore_by_words = await kept_in_slices(
            lore_by_words, lambda m: self._readable_lore(m.passage)
        )
        lore_by_meaning = await kept_in_slices(
            lore_by_meaning, lambda m: self._readable_lore(m.passage)
        )
        found = {m.fact.id: m.fact for m in (*by_words, *by_meaning)}
        passages = {m.passage.id: m.passage for m in (*lore_by_words, *lore_by_meaning)}
        # Relationships nearest in meaning rank on their own, beside the facts: their short
        # sentences lie nearer most questions than facts do, and in one ranking would crowd
        # the facts out (tests/views/test_fact_search_recall.py measures both).
        fused = reciprocal_rank_fusion(
            {
                "words": [("fact", m.fact.id) for m in by_words],
                "meaning": [("fact", m.fact.id) for m in by_meaning],
                _LINK_MEANING: [("relationship", r.id) for r, _ in links_by_meaning],
                "graph": [("relationship", r.id) for r in relationships],
                # Lore ranks on its own as well: its sections' scores are not the facts'.
                _LORE_WORDS: [("lore", m.passage.id) for m in lore_by_words],
                _LORE_MEANING: [("lore", m.passage.id) for m in lore_by_meaning],
            }
        )
        by_id = {r.id: r for r in relationships} | {r.id: r for r, _ in links_by_meaning}
        hits: list[FactHit] = []
        for (kind, item_id), score, rankings in fused[:wanted]:
            found_by = tuple(_REPORTED_AS.get(r, r) for r in rankings)
            if kind == "fact":
                hits.append(self._fact_hit(found[item_id], score, found_by))
            elif kind == "lore":
                hits.append(self._lore_hit(passages[item_id], score, found_by))
            else:
                hits.append(self._relationship_hit(by_id[item_id], score, found_by))
        return hits

    def _readable(self, fact: Fact) -> bool:
        redactor = self.scope.redactor
        return not (
            fact.session_id in self.withheld
            or redactor.mentions_hidden(fact.text)
            or redactor.mentions_hidden(fact.story_label or "")
        )

    def _readable_lore(self, passage: LorePassage) -> bool:
        """A passage, its headings, its document's title and id (an id cannot be redacted)
        naming nothing hidden from the viewer."""
        redactor = self.scope.redactor
        return not any(
            redactor.mentions_hidden(text)
            for text in (
                passage.text,
                passage.heading,
                passage.document_title,
                passage.document_id,
            )
        )

    async def _relationships_near(
        self, vector: list[float], pool: int
    ) -> list[tuple[Relationship, float]]:
        """Relationships whose sentences are nearest the query in meaning, best first; a
        bidirectional pair once."""
        if self._story_bounded():
            return []  # relationships have no story time
        near = await self.memory.facts.relationships_by_vector(
            vector, self.filters, k=pool, npc_id=self.reader.npc_id
        )
        kept: list[tuple[Relationship, float]] = []
        pairs: set[tuple[frozenset[str], str]] = set()
        for rel, score in near:
            if not self._shown(rel):
                continue
            if is_bidirectional(rel.rel_type):
                pair = (frozenset((rel.source_id, rel.target_id)), rel.rel_type)
                if pair in pairs:
                    continue
                pairs.add(pair)
            kept.append((rel, score))
        return kept

    def _shown(self, rel: Relationship) -> bool:
        """Whether the viewer may read the relationship and the filters keep it."""
        return (
            rel.source_id in self.known
            and rel.target_id in self.known
            and rel.provenance.session_id not in self.withheld
            and self.scope.shows_relationship_type(rel.rel_type)
            and self._within_real_time(rel)
            and self.filters.session_id in (None, rel.provenance.session_id)
        )

    async def _relationships(self, query: str, subject: Entity | None) -> list[Relationship]:
        """Relationships of the entity asked about, or of those the query names, that share a
        word with the query, best first."""
        if self._story_bounded():
            return []  # relationships have no story time
        about = [subject.id] if subject else self.scope.mentions.owners_in(query)
        words = {w for w in _WORD.findall(query.lower()) if w not in _STOP}
        scored: dict[int, tuple[int, Relationship]] = {}
        for entity_id in about:
            for rel in await self.memory.graph.relationships_of(
                entity_id, npc_id=self.reader.npc_id
            ):
                if not self._shown(rel):
                    continue
                sentence = self._sentence(rel).lower()
                overlap = len(words & set(_WORD.findall(sentence)))
                if overlap or subject is not None:
                    scored[rel.id] = (overlap, rel)
        return [rel for _, rel in sorted(scored.values(), key=lambda item: (-item[0], item[1].id))]

    def _story_bounded(self) -> bool:
        return any(b is not None and b.story_day is not None for b in (self.lower, self.upper))

    def _within_real_time(self, rel: Relationship) -> bool:
        when = rel.provenance.timestamp
        if self.lower is not None and self.lower.real is not None and when < self.lower.real:
            return False
        return not (
            self.upper is not None and self.upper.real is not None and when >= self.upper.real
        )

    def _name(self, entity_id: str | None) -> str | None:
        entity = self.known.get(entity_id) if entity_id else None
        return entity.name if entity else None

    def _sentence(self, rel: Relationship) -> str:
        return relationship_sentence(
            self._name(rel.source_id) or rel.source_id,
            rel.rel_type,
            self._name(rel.target_id) or rel.target_id,
        )

    def _fact_hit(self, fact: Fact, score: float, found_by: tuple[str, ...]) -> FactHit:
        return FactHit(
            kind="fact",
            id=fact.id,
            text=fact.text,
            subject_id=fact.subject_id,
            subject_name=self._name(fact.subject_id),
            session_id=fact.session_id,
            story_day=fact.story_day,
            story_label=fact.story_label,
            occurred_at=fact.occurred_at,
            provenance=self.reader.provenance(fact.provenance, fact.visibility, self.known),
            secret=fact.visibility.secret,
            score=round(score, 6),
            matched_by=sorted(set(found_by)),
        )

    def _relationship_hit(
        self, rel: Relationship, score: float, found_by: tuple[str, ...]
    ) -> FactHit:
        return FactHit(
            kind="relationship",
            id=rel.id,
            text=self._sentence(rel),
            subject_id=rel.source_id,
            subject_name=self._name(rel.source_id),
            session_id=rel.provenance.session_id,
            story_day=None,
            story_label=None,
            occurred_at=rel.provenance.timestamp,
            provenance=self.reader.provenance(rel.provenance, rel.visibility, self.known),
            secret=rel.visibility.secret,
            score=round(score, 6),
            matched_by=sorted(set(found_by)),
        )

    def _lore_hit(self, passage: LorePassage, score: float, found_by: tuple[str, ...]) -> FactHit:
        return FactHit(
            kind="lore",
            id=passage.id,
            text=passage.text,
            subject_id=None,
            subject_name=None,
            session_id=None,
            story_day=None,
            story_label=None,
            occurred_at=None,
            provenance=self.reader.provenance(_LORE_PROVENANCE),
            secret=passage.visibility.secret,
            score=round(score, 6),
            matched_by=sorted(set(found_by)),
            document=passage.document_id,
            document_title=passage.document_title,
            heading=passage.heading,
        )


async def _none() -> list[LoreMatch]:
    return []
