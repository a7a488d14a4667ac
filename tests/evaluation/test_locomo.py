from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.evaluation.locomo import parse_locomo, session_entries, turn_times

TINY = Path(__file__).parents[1] / "fixtures" / "locomo" / "tiny.json"


def tiny() -> list[dict[str, Any]]:
    return json.loads(TINY.read_text())


def test_a_conversation_becomes_dated_sessions_and_questions() -> None:
    [conversation] = parse_locomo(TINY.read_text(), "tiny.json")
    assert conversation.sample_id == "tiny-1" and conversation.campaign_id == "locomo-tiny-1"
    assert [s.id for s in conversation.sessions] == ["session-1", "session-2", "session-3"]
    assert conversation.sessions[0].started_at == datetime(2024, 3, 3, 14, 0, tzinfo=UTC)
    assert conversation.sessions[1].date_time == "11:58 pm on 10 March, 2024"
    assert len(conversation.turn_ids) == 11
    assert [q.category for q in conversation.questions] == [4, 4, 2, 1, 3, 5]


def test_joined_evidence_ids_are_split() -> None:
    [conversation] = parse_locomo(TINY.read_text(), "tiny.json")
    assert conversation.questions[3].evidence == ("D1:3", "D2:2")
    assert conversation.questions[4].evidence == ()


def test_turns_become_entries_in_order_on_the_session_day() -> None:
    [conversation] = parse_locomo(TINY.read_text(), "tiny.json")
    late = conversation.sessions[1]  # starts two minutes before midnight
    entries = session_entries(late)
    times = [e.spoken_at for e in entries]
    assert times == sorted(set(times))
    assert all(t.date() == late.started_at.date() for t in times)
    assert [e.source_key for e in entries] == ["D2:1", "D2:2", "D2:3", "D2:4"]
    assert (entries[0].speaker_id, entries[0].speaker_name) == ("bram", "Bram")
    # A shared photo is part of what was said, through its caption.
    assert entries[0].text == (
        "Look what Pepper did yesterday. [shares a photo: a photo of a dog chewing a running shoe]"
    )


def test_turns_are_thirty_seconds_apart_when_the_day_allows() -> None:
    start = datetime(2024, 3, 3, 14, 0, tzinfo=UTC)
    assert [(t - start).total_seconds() for t in turn_times(start, 3)] == [0, 30, 60]


def _broken(change: str) -> str:
    data = tiny()
    conversation = data[0]["conversation"]
    if change == "date":
        conversation["session_2_date_time"] = "10 March 2024"
    elif change == "no date":
        del conversation["session_1_date_time"]
    elif change == "turn":
        del conversation["session_1"][1]["speaker"]
    elif change == "repeat":
        conversation["session_3"][0]["dia_id"] = "D1:1"
    elif change == "category":
        data[0]["qa"][0]["category"] = 7
    elif change == "no sessions":
        data[0]["conversation"] = {"speaker_a": "Ada"}
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("{not json", "tiny.json:1:2: not valid JSON"),
        ('{"qa": []}', "tiny.json: expected a LoCoMo file, a JSON list of conversations"),
        ("[[]]", "conversation 1: expected an object"),
        ('[{"conversation": {}}]', "expected 'conversation' (an object) and 'qa' (a list)"),
        (_broken("date"), "session_2_date_time '10 March 2024' is not a time like"),
        (_broken("no date"), "session_1_date_time None is not a time like"),
        (_broken("turn"), "conversation 1 (tiny-1): session_1 turn 2: Invalid input: speaker"),
        (_broken("repeat"), "dia_id 'D1:1' is used by several turns"),
        (_broken("category"), "qa 1: Invalid input: category"),
        (_broken("no sessions"), "no sessions (session_1, session_2, ...) with turns"),
    ],
)
def test_bad_files_name_the_place_and_the_problem(text: str, named: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        parse_locomo(text, "tiny.json")
    assert named in str(raised.value)
