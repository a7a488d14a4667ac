from __future__ import annotations

import pytest

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.transcripts import parse_jsonl

GOOD = (
    '{"speaker_id": "p1", "speaker_name": "Kael", "text": "Hi", '
    '"timestamp": "2026-03-01T19:00:00Z"}'
)


def test_lines_become_entries_and_blank_lines_are_skipped() -> None:
    [entry] = parse_jsonl([GOOD, "  "])
    assert entry.speaker_name == "Kael" and entry.spoken_at.tzinfo is not None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"speaker_id": "p1",', "game.jsonl:2:21: not valid JSON"),
        (
            '{"speaker_id": "p1", "speaker_name": "K", "text": "x"}',
            "game.jsonl:2: Invalid input: timestamp",
        ),
        (GOOD.replace('"Hi"', '"  "'), "game.jsonl:2: Invalid input: text"),
    ],
)
def test_bad_lines_name_file_line_and_field(line: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_jsonl([GOOD, line], "game.jsonl")
    assert str(caught.value).startswith(message)
