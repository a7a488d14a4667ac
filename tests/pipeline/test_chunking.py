from __future__ import annotations

from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.domain.models import Entry
from glyphoxa_mcp.pipeline.chunking import ChunkingPolicy, passages

START = datetime(2026, 3, 1, 19, tzinfo=UTC)


def entries(*seconds: int, words: int = 3) -> list[Entry]:
    return [
        Entry(
            id=i,
            session_id="s1",
            speaker_id="a",
            speaker_name="Ana",
            text=" ".join(["word"] * words),
            raw_text="",
            npc_id=None,
            spoken_at=START + timedelta(seconds=s),
            duration_ms=None,
        )
        for i, s in enumerate(seconds)
    ]


def ids(cut: list) -> list[list[int]]:
    return [[e.id for e in p.entries] for p in cut]


def test_passages_are_size_capped_and_overlap_by_a_line() -> None:
    cut = passages(entries(*range(0, 80, 10)), ChunkingPolicy(max_lines=3, overlap_lines=1))
    assert ids(cut) == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 7]]


def test_by_default_each_line_is_a_passage_with_the_two_before_it() -> None:
    cut = passages(entries(*range(0, 50, 10)))
    assert ids(cut) == [[0, 1, 2], [1, 2, 3], [2, 3, 4]]


def test_a_long_pause_is_a_scene_break_with_no_overlap() -> None:
    cut = passages(entries(0, 10, 20, 1000, 1010), ChunkingPolicy(max_lines=6))
    assert ids(cut) == [[0, 1, 2], [3, 4]]


def test_word_budget_closes_a_passage_but_never_empties_it() -> None:
    cut = passages(entries(0, 1, 2, words=100), ChunkingPolicy(max_words=150, overlap_lines=0))
    assert ids(cut) == [[0], [1], [2]]


def test_content_keeps_speaker_labels() -> None:
    [passage] = passages(entries(0, 1))
    assert passage.content == "Ana: word word word\nAna: word word word"
    assert passage.started_at == START and passage.ended_at == START + timedelta(seconds=1)
