"""Searching past sessions' transcripts by meaning, by words and by the date a query names,
fused, in a viewer's scope."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from glyphoxa_mcp.concurrency import concurrently, kept_in_slices
from glyphoxa_mcp.domain.models import (
    Chunk,
    ChunkMatch,
    ChunkTextMatch,
    Entry,
    EntryMatch,
    SearchFilters,
)
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.event_lines import asks_when, tells_when
from glyphoxa_mcp.recall.fusion import reciprocal_rank_fusion
from glyphoxa_mcp.recall.names_read import spoken
from glyphoxa_mcp.recall.query_dates import named_period
from glyphoxa_mcp.recall.speaker_prior import named_speakers, spoken_share
from glyphoxa_mcp.recall.time_bounds import parse_time_bound
from glyphoxa_mcp.views.arguments import an_id, present, search_query
from glyphoxa_mcp.views.limits import Clamped
from glyphoxa_mcp.views.names_ahead import keep_read, read_ahead
from glyphoxa_mcp.views.reading import Reader, Reading
from glyphoxa_mcp.views.results import (
    WORDS_ONLY_NOTE,
    CountLimit,
    SearchSessionsResult,
    SessionHit,
)
from glyphoxa_mcp.views.session_summary import known_session

# How many candidates each ranking contributes to the fusion, per result wanted.
CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 20

Key = tuple[str, int]  # ("chunk" | "entry", id)
# Rankings that reorder what the others found rather than finding anything themselves.
REORDERINGS = frozenset({"speaker", "event"})


async def search_sessions(
    reader: Reader,
    query: str,
    top_k: Clamped,
    session_id: str | None,
    speaker: str | None,
    npc_id: str | None,
    after: str | None,
    before: str | None,
    graph_expansion: bool,
) -> SearchSessionsResult:
    empty = SearchSessionsResult(results=[], top_k=CountLimit.of(top_k), scope=reader.label)
    text = search_query(query)
    if text is None:
        return empty.model_copy(update={"note": "The query is blank: nothing to search."})
    reading = await reader.reading()
    filters = await _filters(reading, session_id, speaker, npc_id, after, before)
    if filters is None:
        return empty.model_copy(update={"note": f"No speaker named {speaker!r}."})
    search = SessionSearch(reading, filters, graph_expansion)
    hits = await search.run(text, top_k.used)
    note = WORDS_ONLY_NOTE if search.words_only else None if hits else "Nothing matched."
    return empty.model_copy(update={"results": hits, "note": note})


async def _filters(
    reading: Reading,
    session_id: str | None,
    speaker: str | None,
    npc_id: str | None,
    after: str | None,
    before: str | None,
) -> SearchFilters | None:
    session_id, speaker = present(session_id, "session_id"), present(speaker, "speaker")
    npc_id = an_id(npc_id, "npc_id")
    bounds = {}
    for field, value in (("after", after), ("before", before)):
        bound = parse_time_bound(value, field)
        if bound is not None and bound.real is None:
            raise InvalidInputError(
                f"{field} must be a date or time here; transcripts are searched by when they "
                "were spoken at the table, not by story day.",
                field=field,
            )
        bounds[field] = bound.real if bound else None
    scope = reading.scope
    withheld = await reading.withheld_sessions()
    if session_id is not None:
        await known_session(reading.memory, session_id, withheld, npc=reading.npc_id is not None)
    speaker_ids = None
    if speaker is not None:
        # Only by the lines this viewer may read, and only those it may know: a speaker
        # heard only in DM-only lines or withheld sessions, or hidden from this NPC, is to
        # it someone who never spoke, found by the same statement as a name no one has.
        speaker_ids = tuple(
            await reading.memory.log.speaker_ids(
                speaker, reader=reading.npc_id, skipping=withheld, hiding=scope.hidden_ids
            )
        )
        if not speaker_ids or scope.redactor.mentions_hidden(speaker):
            return None
    return reading.transcript_filters(
        withheld,
        SearchFilters(
            session_id=session_id,
            speaker_ids=speaker_ids,
            npc_id=npc_id,
            # An NPC hidden from this viewer is searched like an id no line holds: the same
            # statements, finding nothing, and the same note.
            npc_unknown=npc_id is not None and npc_id in scope.hidden_ids,
            after=bounds["after"],
            before=bounds["before"],
        ),
    )


M = TypeVar("M", ChunkTextMatch, EntryMatch)


def _relative(matches: list[M]) -> list[M]:
    """The matches with each rank divided by the best one (ranks are positive)."""
    if not matches:
        return matches
    best = max(m.rank for m in matches)
    return [m.model_copy(update={"rank": m.rank / best}) for m in matches]


@dataclass
class Candidates:
    """Rankings of what a search found, and the chunks and entries they rank."""

    rankings: dict[str, list[Key]]
    chunks: dict[int, Chunk]
    entries: dict[int, Entry]


class SessionSearch:
    """One search of the transcripts in a viewer's reading, under `filters` (made from it)."""

    def __init__(
        self, reading: Reading, filters: SearchFilters, graph_expansion: bool = False
    ) -> None:
        self.reader = reading.reader
        self.npc_id = reading.npc_id
        self.memory = reading.memory
        self.filters = filters
        self.scope = reading.scope
        self.graph_expansion = graph_expansion
        self.tuning = reading.reader.search_tuning
        self.words_only = False

    async def run(self, query: str, wanted: int) -> list[SessionHit]:
        pool = max(MIN_CANDIDATES, CANDIDATES_PER_RESULT * wanted)
        embedding = await self.reader.embed_query_if_able(query)
        self.words_only = embedding is None
        found = await self._meaning_and_words(query, embedding, self.filters, pool)
        said_then: Candidates | None = None
        period = named_period(query)
        if period is not None and self.filters.after is None and self.filters.before is None:
            # The date the query names: what was said then, ranked the same way.
            then = self.filters.model_copy(update={"after": period.start, "before": period.end})
            said_then = await self._meaning_and_words(query, embedding, then, pool)
            found.chunks.update(said_then.chunks)
            found.entries.update(said_then.entries)
        graph: list[Chunk] = []
        if self.graph_expansion and embedding is not None:
            graph = await self._through_the_graph(query, embedding, pool)
            found.chunks.update({c.id: c for c in graph})
        # A passage is given as its lines from the log, so overlapping ones can be trimmed.
        lines = {i for c in found.chunks.values() for i in c.entry_ids} - found.entries.keys()
        sessions = {c.session_id for c in found.chunks.values() if c.session_id is not None}
        sessions |= {e.session_id for e in found.entries.values()}
        judged_in_context = self.npc_id is not None and self.scope.redactor.hides_anything
        more_lines, titles, neighbours = await concurrently(
            lambda: self.memory.log.get_many(sorted(lines)),
            lambda: self.memory.sessions.titles(sessions),
            lambda: self.memory.log.neighbour_texts(
                found.entries.keys() | lines if judged_in_context else ()
            ),
        )
        found.entries.update({e.id: e for e in more_lines})
        # What the viewer may not read in whole neither ranks nor shows: a passage holding
        # a hidden line is left out, not shown without it, as its place in the ranking
        # would tell that the query's words were said there.
        readable = await self._readable(found.chunks, found.entries, neighbours)

        def kept(ranking: list[Key]) -> list[Key]:
            return [key for key in ranking if key in readable]

        rankings = {name: kept(ranking) for name, ranking in found.rankings.items()}
        if said_then is not None:
            kept_then = {name: kept(ranking) for name, ranking in said_then.rankings.items()}
            rankings["date"] = [key for key, _, _ in self._fuse(kept_then)]
        if graph:
            rankings["graph"] = kept([("chunk", c.id) for c in graph])
        fused = self._fuse(rankings)
        before = len(rankings)
        if self.tuning.speaker_weight > 0:
            spoken = self._spoken_by_named(query, fused, found)
            if spoken:
                rankings["speaker"] = spoken
        if self.tuning.event_weight > 0 and asks_when(query):
            rankings["event"] = [
                key for key, _, _ in fused if any(tells_when(t) for t in self._texts(key, found))
            ]
        if len(rankings) > before:
            fused = self._fuse(rankings)
        return self._hits(fused, found.chunks, found.entries, titles, wanted)

    def _fuse(self, rankings: dict[str, list[Key]]) -> list[tuple[Key, float, tuple[str, ...]]]:
        weights = {
            "meaning": self.tuning.meaning_weight,
            "speaker": self.tuning.speaker_weight,
            "event": self.tuning.event_weight,
        }
        return reciprocal_rank_fusion(rankings, weights, k=self.tuning.fusion_k)

    @staticmethod
    def _lines(key: Key, found: Candidates) -> list[Entry]:
        kind, item_id = key
        ids = found.chunks[item_id].entry_ids if kind == "chunk" else (item_id,)
        return [found.entries[i] for i in ids if i in found.entries]

    def _texts(self, key: Key, found: Candidates) -> list[str]:
        lines = self._lines(key, found)
        return [e.text for e in lines] if lines else [found.chunks[key[1]].content]

    def _spoken_by_named(
        self, query: str, fused: list[tuple[Key, float, tuple[str, ...]]], found: Candidates
    ) -> list[Key]:
        """The fused candidates mostly spoken by a speaker the query names, in fused order."""
        named = named_speakers(query, {e.speaker_name for e in found.entries.values()})
        if not named:
            return []

        def speakers(key: Key) -> list[str]:
            return [entry.speaker_name for entry in self._lines(key, found)]

        return [key for key, _, _ in fused if spoken_share(speakers(key), named) > 0.5]

    async def _readable(
        self,
        chunks: dict[int, Chunk],
        entries: dict[int, Entry],
        neighbours: Mapping[int, tuple[str | None, str | None]],
    ) -> set[Key]:
        """The candidates this viewer may read whole: a line that names nothing hidden, by
        itself or with the line before or after it (`neighbours`: a name split in two)."""
        if self.npc_id is None:
            return {("chunk", i) for i in chunks} | {("entry", i) for i in entries}
        scope = self.scope
        withheld = set(self.filters.withheld_sessions)

        redactor = scope.redactor
        to_keep = await read_ahead(
            self.memory,
            redactor,
            [
                *(spoken(entry.speaker_name, entry.text) for entry in entries.values()),
                *(chunk.content for chunk in chunks.values() if not chunk.entry_ids),
            ],
        )

        def line_readable(entry: Entry) -> bool:
            before, after = neighbours.get(entry.id, (None, None))
            return not (
                entry.dm_only
                or entry.session_id in withheld
                or entry.npc_id in scope.hidden_ids
                or redactor.mentions_hidden(spoken(entry.speaker_name, entry.text))
                or (before is not None and redactor.mentions_hidden_across(before, entry.text))
                or (after is not None and redactor.mentions_hidden_across(entry.text, after))
            )

        lines = {
            i for i, entry in await kept_in_slices(entries.items(), lambda e: line_readable(e[1]))
        }
        readable: set[Key] = {("entry", i) for i in lines}
        for chunk_id, chunk in chunks.items():
            if chunk.dm_only or (chunk.session_id is not None and chunk.session_id in withheld):
                continue
            whole = (
                all(i in lines for i in chunk.entry_ids)
                if chunk.entry_ids
                else not scope.redactor.mentions_hidden(chunk.content)
            )
            if whole:
                readable.add(("chunk", chunk_id))
        await keep_read(self.memory, to_keep)
        return readable

    async def _meaning_and_words(
        self, query: str, embedding: list[float] | None, filters: SearchFilters, pool: int
    ) -> Candidates:
        async def nearest() -> list[ChunkMatch]:
            if embedding is None:
                return []
            return await self.memory.index.nearest(embedding, filters, k=pool)

        # Independent reads, side by side.
        by_meaning, chunk_words, entry_words = await concurrently(
            nearest,
            lambda: self.memory.index.search_text(query, filters, k=pool),
            lambda: self.memory.log.search(query, filters, limit=pool),
        )
        # Passages and single utterances that share words with the query, in one ranking:
        # BM25 scores of the two collections differ in scale, so each is taken relative to
        # its best.
        words = sorted(
            [(m.rank, ("chunk", m.chunk.id)) for m in _relative(chunk_words)]
            + [(m.rank, ("entry", m.entry.id)) for m in _relative(entry_words)],
            key=lambda item: -item[0],
        )
        return Candidates(
            rankings={
                "meaning": [("chunk", m.chunk.id) for m in by_meaning],
                "words": [key for _, key in words],
            },
            chunks={m.chunk.id: m.chunk for m in (*by_meaning, *chunk_words)},
            entries={m.entry.id: m.entry for m in entry_words},
        )

    async def _through_the_graph(self, query: str, embedding: list[float], k: int) -> list[Chunk]:
        """DEEP: chunks about the entities the query names and their neighbours."""
        named = self.scope.mentions.owners_in(query)
        if not named:
            return []
        found = await self.memory.queries.chunks_near_entities(
            named, embedding, depth=1, k=k, npc_id=self.npc_id, filters=self.filters
        )
        return [item.match.chunk for item in found]

    def _hits(
        self,
        fused: list[tuple[Key, float, tuple[str, ...]]],
        chunks: dict[int, Chunk],
        entries: dict[int, Entry],
        titles: dict[str, str | None],
        wanted: int,
    ) -> list[SessionHit]:
        hits: list[SessionHit] = []
        covered: set[int] = set()
        for (kind, item_id), score, found_by in fused:
            if len(hits) == wanted:
                break
            if kind == "chunk" and not chunks[item_id].entry_ids:
                chunk = chunks[item_id]
                session_id, text, entry_ids = chunk.session_id, chunk.content, []
                started, ended = chunk.started_at, chunk.ended_at
            else:
                # Passages overlap, so a passage may repeat lines an earlier hit returned:
                # only its new lines are given (the reader has the others already).
                ids = chunks[item_id].entry_ids if kind == "chunk" else (item_id,)
                lines = [entries[i] for i in ids if i not in covered and i in entries]
                if not lines:
                    continue
                session_id = lines[0].session_id
                text = "\n".join(f"{e.speaker_name}: {e.text}" for e in lines)
                entry_ids = [e.id for e in lines]
                started, ended = lines[0].spoken_at, lines[-1].spoken_at
            covered.update(entry_ids)
            title = titles.get(session_id) if session_id else None
            if title is not None and self.scope.redactor.mentions_hidden(title):
                title = None
            hits.append(
                SessionHit(
                    session_id=session_id,
                    session_title=title,
                    text=text,
                    started_at=started,
                    ended_at=ended,
                    score=round(score, 6),
                    entry_ids=entry_ids,
                    matched_by=sorted(set(found_by) - REORDERINGS),
                )
            )
        return hits
