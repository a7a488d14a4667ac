from __future__ import annotations

from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.domain.models import Entity, Entry, Visibility
from glyphoxa_mcp.pipeline.summary import extractive_summary, key_moments
from glyphoxa_mcp.recall.mentions import NamePattern

START = datetime(2026, 3, 7, 19, tzinfo=UTC)
TALK = [
    ("DM", "The rain drives you into the Red Kettle."),
    ("Brannoch", "Welcome, friends! Sit, eat, the stew is hot."),
    ("Kael", "We heard a caravan went missing on the road."),
    ("Brannoch", "Find those wagons and I will pay you forty silver."),
    ("Lyra", "Nice weather for ducks, I suppose, all things told."),
    ("Berrit", "I saw lights on the water the night it vanished."),
    ("Kael", "Deal. We promise to find it before the spring tide."),
]


def entries() -> list[Entry]:
    return [
        Entry(
            id=i,
            session_id="s1",
            speaker_id=name.lower(),
            speaker_name=name,
            text=text,
            raw_text=text,
            npc_id=None,
            spoken_at=START + timedelta(seconds=10 * i),
            duration_ms=None,
        )
        for i, (name, text) in enumerate(TALK)
    ]


KNOWN = [
    Entity(
        id="red-kettle",
        type="location",
        name="Red Kettle",
        aliases=(),
        attributes={},
        visibility=Visibility(),
    )
]


def test_key_moments_favour_names_promises_and_decisions_in_spoken_order() -> None:
    moments = key_moments(entries(), NamePattern.of_entities(KNOWN))
    said = [m.sentence for m in moments]
    assert "Find those wagons and I will pay you forty silver." in said
    assert "We promise to find it before the spring tide." in said
    assert "Nice weather for ducks, I suppose, all things told." not in said
    assert [m.order for m in moments] == sorted(m.order for m in moments)


def test_the_summary_quotes_speakers_one_moment_per_line() -> None:
    text = extractive_summary(
        entries(), NamePattern.of_entities(KNOWN), {"red-kettle": "Red Kettle"}
    )
    lines = text.splitlines()
    assert lines[0] == "Speaking: DM, Brannoch, Kael, Lyra, Berrit."
    assert lines[1] == "Mentioned: Red Kettle."
    assert "Brannoch: \u201cFind those wagons and I will pay you forty silver.\u201d" in lines
    assert (
        extractive_summary([], NamePattern.of_entities([]), {})
        == "Nothing was said in this session."
    )
