"""The searches' rankings on their own, beside what they are held to: our word ranking (BM25
in PostgreSQL) beside the `bm25s` library over the same passages in memory, the fast BM25 a
user would otherwise pick; our meaning ranking beside a bare HNSW top-k statement.

All four are asked the DM's search_sessions queries, with the number of candidates each
ranking gives the fusion for that query's top_k, and no filters (the library has none): the
same question to each. The word ranking ranks passages and single utterances, as
search_sessions does (views/session_search.py), and so does the library: one index of the
campaign's passages and one of its utterances (with the speaker's name, as the utterances'
`tsv` holds it), each asked for the top k. The library's indexes are built before timing;
a query is timed from its words to the ids of both top k.

tantivy (the Rust search engine library, through its Python bindings) is asked the same
queries over the same two collections the same way, with its English stemming analyzer and
its BM25: the word ranking's p95 is reported beside it, the yardstick of a word ranking an
engine built for it reaches, without a verdict of its own.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID
from glyphoxa_mcp.bench.operations import (
    MEANING_FLOOR,
    MEANING_LEG,
    TANTIVY_PEER,
    WORD_LEG,
    WORD_PEER,
    BenchContext,
    rotating,
)
from glyphoxa_mcp.bench.timing import Operation
from glyphoxa_mcp.concurrency import concurrently
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NO_FILTERS
from glyphoxa_mcp.errors import BenchError, ConfigurationError
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.session_search import CANDIDATES_PER_RESULT, MIN_CANDIDATES

INSTALL_PEERS = "pip install 'glyphoxa-mcp[bench]'"
# The `bench` extra's modules: bm25s and its stemmer (PyStemmer), and tantivy.
PEER_MODULES = ("bm25s", "Stemmer", "tantivy")
PASSAGES = "SELECT content FROM chunks WHERE campaign_id = $1 ORDER BY id"
UTTERANCES = (
    "SELECT speaker_name || ' ' || text FROM session_entries WHERE campaign_id = $1 ORDER BY id"
)
NEAREST_PASSAGES = "SELECT id FROM chunks WHERE campaign_id = $1 ORDER BY embedding <=> $2 LIMIT $3"


def require_peers() -> None:
    """Stop at once, before a long load, when a library the word ranking is held to or
    reported beside is missing: a bench without it would have no verdict or no yardstick for
    that ranking."""
    missing = [name for name in PEER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigurationError(
            f"The bench compares the word ranking with bm25s and tantivy; "
            f"{', '.join(missing)} not installed: {INSTALL_PEERS}"
        )


def candidates(top_k: int) -> int:
    """How many candidates each ranking gives search_sessions' fusion for `top_k`."""
    return max(MIN_CANDIDATES, CANDIDATES_PER_RESULT * top_k)


@dataclass(frozen=True)
class Search:
    query: str
    k: int
    vector: list[float]


def searches(context: BenchContext) -> list[Search]:
    found = []
    for arguments in context.session_searches:
        query = arguments["query"]
        if query not in context.query_vectors:
            raise BenchError(f"No precomputed vector for the query {query!r}.")
        found.append(Search(query, candidates(arguments["top_k"]), context.query_vectors[query]))
    if not found:
        raise BenchError("The rankings have no queries to be asked.")
    return found


class InMemoryBM25:
    """One collection's texts, indexed by `bm25s` with English stop words and the Snowball
    stemmer (PostgreSQL's `english` configuration does both too)."""

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s  # type: ignore[import-untyped]  # an optional extra, without types
        import Stemmer  # type: ignore[import-not-found]

        self._bm25s: Any = bm25s
        self._stemmer: Any = Stemmer.Stemmer("english")
        self.size = len(texts)
        self._retriever: Any = bm25s.BM25()
        if texts:
            self._retriever.index(self._tokens(texts, ids=True), show_progress=False)

    def _tokens(self, texts: Sequence[str], *, ids: bool) -> Any:
        return self._bm25s.tokenize(
            list(texts),
            stopwords="en",
            stemmer=self._stemmer,
            return_ids=ids,
            show_progress=False,
        )

    def top(self, query: str, k: int) -> list[int]:
        """The positions of the `k` best texts for the query (fewer when there are fewer)."""
        if not self.size:
            return []
        found, _scores = self._retriever.retrieve(
            self._tokens([query], ids=False),
            k=min(k, self.size),
            show_progress=False,
            n_threads=0,
        )
        return [int(position) for position in found[0]]


# The runs of letters and digits tantivy's simple tokenizer splits a text into. A query
# is handed to its query parser as these words alone, lower case: nothing in a player's
# words then reads as the parser's syntax (AND, field:, quotes, +/-), and the parser's own
# analyzer finds the same terms in them.
QUERY_WORD = re.compile(r"[^\W_]+")
TEXT_FIELD = "text"
POSITION_FIELD = "position"
# The writer's memory for indexing, one thread: big enough that a campaign's collection is
# one segment, and nothing of it is timed.
TANTIVY_WRITER_HEAP = 256_000_000


# tantivy's `en_stem` with its English stop words left out, as PostgreSQL's `english`
# configuration and the bm25s peer leave theirs out: the same question asked of each.
ANALYZER = "en_stop_stem"


class TantivyBM25:
    """One collection's texts in a tantivy index in memory, analyzed as `en_stem` does
    (words lower-cased and Snowball-stemmed) less tantivy's English stop words, and ranked
    by its BM25. Each text's position is a fast field, read for the hits without their
    stored documents."""

    def __init__(self, texts: Sequence[str]) -> None:
        import tantivy  # an optional extra

        builder = tantivy.SchemaBuilder()
        builder.add_text_field(TEXT_FIELD, stored=False, tokenizer_name=ANALYZER)
        builder.add_unsigned_field(POSITION_FIELD, stored=False, indexed=False, fast=True)
        self._index = tantivy.Index(builder.build())
        self._index.register_tokenizer(
            ANALYZER,
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stopword("english"))
            .filter(tantivy.Filter.stemmer("english"))
            .build(),
        )
        writer = self._index.writer(heap_size=TANTIVY_WRITER_HEAP, num_threads=1)
        for position, text in enumerate(texts):
            document = tantivy.Document()
            document.add_text(TEXT_FIELD, text)
            document.add_unsigned(POSITION_FIELD, position)
            writer.add_document(document)
        writer.commit()
        writer.wait_merging_threads()
        self._index.reload()
        self._searcher = self._index.searcher()
        self.size = len(texts)

    def top(self, query: str, k: int) -> list[int]:
        """The positions of the `k` best texts for the query (fewer when fewer match)."""
        words = QUERY_WORD.findall(query.lower())
        if not words or not self.size:
            return []
        parsed = self._index.parse_query(" ".join(words), [TEXT_FIELD])
        hits = self._searcher.search(parsed, limit=k, count=False).hits
        addresses = [address for _score, address in hits]
        read = self._searcher.fast_field_values(POSITION_FIELD, addresses)
        positions = [position for position in read if isinstance(position, int)]
        if len(positions) != len(read):
            raise BenchError(f"tantivy read no position for some of its hits: {read!r}")
        return positions


async def _texts(db: Database, sql: str) -> list[str]:
    return [row[0] for row in await db.pool.fetch(sql, CAMPAIGN_ID)]


class _Ranker(Protocol):
    def top(self, query: str, k: int) -> list[int]: ...


async def _peer(
    context: BenchContext, name: str, index: Callable[[Sequence[str]], _Ranker]
) -> Operation:
    """A word ranking in memory over the campaign's passages and utterances, asked the
    searches the leg is asked, each collection its top k, as the leg runs them."""
    asked = rotating(searches(context))
    passages = index(await _texts(context.db, PASSAGES))
    utterances = index(await _texts(context.db, UTTERANCES))

    def rank(number: int) -> None:
        search: Search = asked(number)
        passages.top(search.query, search.k)
        utterances.top(search.query, search.k)

    return Operation(name, rank)


async def word_peer(context: BenchContext) -> Operation:
    """`bm25s` over the campaign's passages and utterances, in memory."""
    return await _peer(context, WORD_PEER, InMemoryBM25)


async def tantivy_peer(context: BenchContext) -> Operation:
    """tantivy over the campaign's passages and utterances, in memory: the same queries, the
    same k, timed the same way as `word_peer`."""
    return await _peer(context, TANTIVY_PEER, TantivyBM25)


def word_leg(context: BenchContext) -> Operation:
    """Our word ranking alone, as search_sessions runs it: passages and utterances side by
    side, each its top k."""
    asked = rotating(searches(context))
    memory = CampaignMemory(context.db, CAMPAIGN_ID)

    async def rank(number: int) -> None:
        search: Search = asked(number)
        await concurrently(
            lambda: memory.index.search_text(search.query, NO_FILTERS, k=search.k),
            lambda: memory.log.search(search.query, NO_FILTERS, limit=search.k),
        )

    return Operation(WORD_LEG, rank)


def meaning_leg(context: BenchContext) -> Operation:
    """Our meaning ranking alone: the nearest passages, as search_sessions asks for them."""
    asked = rotating(searches(context))
    memory = CampaignMemory(context.db, CAMPAIGN_ID)

    async def rank(number: int) -> None:
        search: Search = asked(number)
        await memory.index.nearest(search.vector, NO_FILTERS, k=search.k)

    return Operation(MEANING_LEG, rank)


def meaning_floor(context: BenchContext) -> Operation:
    """The bare HNSW top-k statement: the ids of the nearest passages, nothing else."""
    asked = rotating(searches(context))

    async def rank(number: int) -> None:
        search: Search = asked(number)
        await context.db.pool.fetch(NEAREST_PASSAGES, CAMPAIGN_ID, search.vector, search.k)

    return Operation(MEANING_FLOOR, rank)


async def ranking_operations(context: BenchContext) -> list[Operation]:
    """Each ranking beside what it is held to: the floor or peers right after it."""
    return [
        word_leg(context),
        await word_peer(context),
        await tantivy_peer(context),
        meaning_leg(context),
        meaning_floor(context),
    ]
