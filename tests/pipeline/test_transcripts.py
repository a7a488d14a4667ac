from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.transcripts import parse_transcript, read_jsonl

GOOD = (
    '{"speaker_id": "p1", "speaker_name": "Kael", "text": "Hi", '
    '"timestamp": "2026-03-01T19:00:00Z"}'
)


def test_lines_become_entries_and_blank_lines_are_skipped() -> None:
    [entry] = read_jsonl([GOOD, "  "]).entries
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
        read_jsonl([GOOD, line], "game.jsonl")
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("text", ["", "\n", "  \n\n\t\n"])
def test_a_transcript_without_lines_is_an_error_naming_the_file(text: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_transcript(text, "night.txt", datetime(2026, 3, 1, tzinfo=UTC))
    assert str(caught.value).startswith("night.txt: the transcript has no lines")


def test_either_format_of_transcript_reads_through_one_function() -> None:
    start = datetime(2026, 3, 1, tzinfo=UTC)
    [jsonl] = parse_transcript(f"\n{GOOD}\n", "game.jsonl", start).entries
    [plain] = parse_transcript("\nKael: Hi\n", "game.txt", start).entries
    assert (jsonl.speaker_name, plain.speaker_name) == ("Kael", "Kael")


def line(second: int, speaker: str, text: str) -> str:
    return (
        f'{{"speaker_id": "{speaker.lower()}", "speaker_name": "{speaker}", "text": "{text}", '
        f'"timestamp": "2026-03-01T19:00:{second:02d}Z"}}'
    )


def test_a_scene_object_starts_a_scene_that_the_lines_after_it_belong_to() -> None:
    transcript = read_jsonl(
        [
            line(0, "Kael", "Before any scene."),
            '{"scene": {"location": "Red Kettle", "present": ["Brannoch", "Berrit"], '
            '"title": "At the inn"}}',
            line(5, "Brannoch", "Welcome."),
            line(9, "Kael", "Thanks."),
            '{"scene": {"location": "Greywater Crossing"}}',
            line(20, "Lyra", "The ford is high."),
        ],
        "night.jsonl",
    )
    assert len(transcript.entries) == 4
    [(first, inn), (then, crossing)] = transcript.scenes
    assert (first, then) == (1, 3)
    assert (inn.location, inn.present, inn.title) == (
        "Red Kettle",
        ("Brannoch", "Berrit"),
        "At the inn",
    )
    assert (inn.source, crossing.source) == ("night.jsonl:2", "night.jsonl:5")
    assert (crossing.location, crossing.present, crossing.title) == ("Greywater Crossing", (), None)


def test_a_plain_transcript_starts_a_scene_with_a_marker_line() -> None:
    transcript = parse_transcript(
        "[scene] location: Red Kettle; present: Brannoch, Old Berrit; title: At the inn\n"
        "Brannoch: Welcome.\n"
        "[Scene]   present: Maelis\n"
        "Maelis: Quiet now.\n",
        "night.txt",
        datetime(2026, 3, 1, tzinfo=UTC),
    )
    assert [e.speaker_name for e in transcript.entries] == ["Brannoch", "Maelis"]
    [(opens_inn, inn), (opens_later, later)] = transcript.scenes
    assert (opens_inn, opens_later) == (0, 1)
    assert (inn.location, inn.present, inn.title) == (
        "Red Kettle",
        ("Brannoch", "Old Berrit"),
        "At the inn",
    )
    assert (later.location, later.present, later.source) == (None, ("Maelis",), "night.txt:3")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"scene": {"location": "Red Kettle"}}'], r"t\.jsonl:1: the scene started here has no"),
        (
            ['{"scene": {}}', '{"scene": {"title": "Two"}}', line(1, "Kael", "Hi")],
            r"t\.jsonl:2: a scene starts here, but the scene started at t\.jsonl:1 has no lines",
        ),
        (['{"scene": {"where": "Red Kettle"}}'], r"t\.jsonl:1: scene\.where: .*not permitted"),
        (['{"scene": "Red Kettle"}'], r"t\.jsonl:1: scene: must be an object"),
        (['{"scene": {}, "text": "x"}'], r"t\.jsonl:1: a scene object holds only 'scene'"),
        (['{"scene": {"present": "Brannoch"}}'], r"t\.jsonl:1: scene\.present: "),
        # The last line of a scene said in the same second as the next scene's first.
        (
            ['{"scene": {}}', line(1, "Kael", "A"), '{"scene": {}}', line(1, "Lyra", "B")],
            r"t\.jsonl:4: the first line of the scene started at t\.jsonl:3 is stamped .*not "
            r"after the scene before it begins",
        ),
        # A line stamped before its own scene began belongs to the scene before.
        (
            [
                '{"scene": {}}',
                line(1, "Kael", "A"),
                '{"scene": {}}',
                line(5, "Lyra", "B"),
                line(3, "Kael", "C"),
            ],
            r"^t\.jsonl:5: stamped 2026-03-01T19:00:03\+00:00, outside the scene it is written "
            r"in \(started at t\.jsonl:3\); a line belongs to the scene its time falls in: "
            r"correct its time or move it\.$",
        ),
        (
            [line(4, "Kael", "A"), '{"scene": {}}', line(3, "Lyra", "B")],
            r"^t\.jsonl:1: stamped .*, outside the time before the first scene;",
        ),
    ],
)
def test_a_bad_scene_is_an_error_naming_file_line_and_field(lines: list[str], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        read_jsonl(lines, "t.jsonl")


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("[scene] place: Red Kettle", r"t\.txt:1: expected '\[scene\] location: \.\.\."),
        ("[scene] title: A; title: B", r"t\.txt:1: scene\.title: given twice"),
        ("[scene] title: ", r"t\.txt:1: scene\.title: "),
    ],
)
def test_a_bad_scene_line_is_an_error_naming_file_line_and_part(marker: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        parse_transcript(f"{marker}\nKael: Hi\n", "t.txt", datetime(2026, 3, 1, tzinfo=UTC))
