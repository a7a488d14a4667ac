from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import Word
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.ingest import ingest_entries
from glyphoxa_mcp.pipeline.transcripts import looks_like_jsonl, parse_jsonl, parse_plain
from glyphoxa_mcp.storage.memory import CampaignMemory

START = datetime(2026, 3, 7, 19, tzinfo=UTC)
PLAIN = ["Brannoch: Welcome, friends!", "", "Kael: Any news of the caravan?"]
JSONL = [
    '{"speaker_id": "p1", "speaker_name": "Kael", "text": "We ride to Saltmere.", '
    '"timestamp": "2026-03-07T19:00:05Z", "words": [{"word": "We", "confidence": 0.99}, '
    '{"word": "ride", "confidence": 0.97}, {"word": "to", "confidence": 0.99}, '
    '{"word": "salt", "confidence": 0.41}, {"word": "mirror", "confidence": 0.38}], '
    '"duration_ms": 1800, "speaker_extra": "ignored"}'
]


def test_plain_lines_get_speakers_times_and_stable_keys() -> None:
    first = parse_plain(PLAIN, START)
    again = parse_plain(PLAIN, datetime(2030, 1, 1, tzinfo=UTC))
    assert [(e.speaker_name, e.speaker_id, e.text) for e in first] == [
        ("Brannoch", "brannoch", "Welcome, friends!"),
        ("Kael", "kael", "Any news of the caravan?"),
    ]
    assert [e.source_key for e in first] == [e.source_key for e in again]
    assert (first[1].spoken_at - first[0].spoken_at).total_seconds() == 10
    with pytest.raises(InvalidInputError, match=r"t\.txt:2: expected 'Speaker: text'"):
        parse_plain(["A: ok", "no speaker here"], START, "t.txt")
    assert looks_like_jsonl(JSONL[0]) and not looks_like_jsonl("\n".join(PLAIN))


async def test_ingesting_twice_adds_nothing_and_keeps_words(db: Database) -> None:
    entries = parse_jsonl(JSONL)
    first = await ingest_entries(db, "coast", "s1", entries, title="Night one")
    again = await ingest_entries(db, "coast", "s1", entries)
    assert (first.added, again.added) == (1, 0)
    memory = CampaignMemory(db, "coast")
    [stored] = await memory.log.entries("s1")
    assert stored.words is not None and stored.words[3] == Word(word="salt", confidence=0.41)
    assert stored.duration_ms == 1800
    session = await memory.sessions.get("s1")
    assert session.title == "Night one" and session.started_at == stored.spoken_at


async def test_a_failed_ingest_stores_nothing(db: Database) -> None:
    entries = parse_plain(PLAIN, START)
    with pytest.raises(InvalidInputError):
        await ingest_entries(db, "bad campaign id", "s1", entries)
    assert await CampaignMemory(db, "coast").sessions.list() == []
