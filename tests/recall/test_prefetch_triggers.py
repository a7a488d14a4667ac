from __future__ import annotations

import pytest

from glyphoxa_mcp.recall.prefetch_triggers import temporal_reference


@pytest.mark.parametrize(
    ("utterance", "phrase"),
    [
        ("Do you remember the caravan we", "Do you remember"),
        ("Last time we were here you", "Last time"),
        ("You promised us forty silver", "You promised"),
        ("Three days ago a ship", "days ago"),
        ("like before, Brannoch", "like before"),
        ("We met at the crossing", "We met"),
    ],
)
def test_references_to_the_past_are_found(utterance: str, phrase: str) -> None:
    assert temporal_reference(utterance) == phrase


@pytest.mark.parametrize(
    "utterance",
    [
        "What's the soup today?",
        "Remembrance Day is tomorrow",
        "The earliest boat leaves at dawn",
        "",
    ],
)
def test_talk_about_the_present_is_not_a_reference(utterance: str) -> None:
    assert temporal_reference(utterance) is None
