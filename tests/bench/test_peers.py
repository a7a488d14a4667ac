"""The libraries the word ranking is held to and reported beside, on texts small enough to
read: bm25s (its peer) and tantivy (its yardstick), each ranking by BM25 over words stemmed
as PostgreSQL's english configuration stems them."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.bench import peers
from glyphoxa_mcp.errors import ConfigurationError

INN = ["the bridge fell into the river", "a quiet night at the inn", "bridges and rivers"]
# Every passage shares the common words; one alone names the basilisk.
TAVERN = [
    "the party drank at the tavern and the bard sang of the road",
    "the bard sang of the road and the party drank at the tavern",
    "at the tavern the party heard the bard and drank to the road",
    "the party left the tavern at dawn; a basilisk slept on the road",
    "the road was long and the party sang at the tavern of the bard",
]


def test_the_in_memory_peer_ranks_by_words() -> None:
    index = peers.InMemoryBM25(INN)
    assert index.top("what fell?", 2)[0] == 0
    # Stemmed as PostgreSQL's english configuration does: "inns" finds "inn".
    assert index.top("quiet inns", 2)[0] == 1
    assert len(index.top("bridge", 10)) == 3  # no more than there are


def test_tantivy_ranks_by_stemmed_words_and_returns_no_more_than_match() -> None:
    index = peers.TantivyBM25(INN)
    assert index.top("what fell?", 2) == [0]
    assert index.top("quiet inns", 2) == [1]
    # "bridge" and "bridges" stem alike; the shorter text ranks first (BM25's length norm).
    assert index.top("Bridge", 10) == [2, 0]
    assert index.top("bridge", 1) == [2]
    assert peers.TantivyBM25([]).top("bridge", 3) == []


def test_tantivy_puts_the_passage_with_the_rare_word_first() -> None:
    index = peers.TantivyBM25(TAVERN)
    found = index.top("did the party see the basilisk on the road?", 3)
    assert found[0] == 3
    assert len(found) == 3


def test_tantivy_reads_a_players_words_as_words_not_as_query_syntax() -> None:
    index = peers.TantivyBM25(INN)
    # Upper-case AND/OR/NOT, quotes, field names and +/- are the query parser's syntax;
    # here they are only words ("and" a stop word: it finds nothing, and is no error).
    assert index.top('NOT the "bridge: +fell -river', 3)[0] == 0
    assert index.top("AND", 3) == []
    assert index.top("?!", 3) == []


def test_tantivy_and_bm25s_agree_on_a_tiny_corpus_where_bm25_leaves_no_tie() -> None:
    texts = [
        "the dragon burned the mill",
        "the dragon slept; the dragon woke; the dragon flew over the mill",
        "the miller sold flour at the market",
        "a knight rode to the market",
        "the knight fought the dragon at the market",
    ]
    ours, theirs = peers.TantivyBM25(texts), peers.InMemoryBM25(texts)
    for query, ranked in [
        # More of the word in a text outweighs its length; the shortest of the rest first.
        ("dragon", [1, 0, 4]),
        # Both words in the shorter text, then both in the longer, then one.
        ("knight market", [3, 4, 2]),
        ("miller flour", [2]),
    ]:
        # tantivy ranks the texts that match; bm25s ranks every text, the rest after them.
        assert ours.top(query, 5) == ranked == theirs.top(query, 5)[: len(ranked)]


def test_without_a_peer_library_the_bench_stops_naming_it_and_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(peers, "PEER_MODULES", ("bm25s", "glyphoxa_no_such_tantivy"))
    with pytest.raises(
        ConfigurationError,
        match=r"glyphoxa_no_such_tantivy not installed: pip install 'glyphoxa-mcp\[bench\]'",
    ):
        peers.require_peers()
