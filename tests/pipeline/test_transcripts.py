from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.transcripts import parse_jsonl, parse_transcript

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
        ('{"words": ' + "[" * 5000, "game.jsonl:2:110: nested deeper than 100 levels"),
    ],
)
def test_bad_lines_name_file_line_and_field(line: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_jsonl([GOOD, line], "game.jsonl")
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("text", ["", "\n", "  \n\n\t\n"])
def test_a_transcript_without_lines_is_an_error_naming_the_file(text: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_transcript(text, "night.txt", datetime(2026, 3, 1, tzinfo=UTC))
    assert str(caught.value).startswith("night.txt: the transcript has no lines")


def test_either_format_of_transcript_reads_through_one_function() -> None:
    start = datetime(2026, 3, 1, tzinfo=UTC)
    [jsonl] = parse_transcript(f"\n{GOOD}\n", "game.jsonl", start)
    [plain] = parse_transcript("\nKael: Hi\n", "game.txt", start)
    assert (jsonl.speaker_name, plain.speaker_name) == ("Kael", "Kael")
