from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_mcp.domain.models import Entity, Entry, Visibility
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.domain.session_summaries import render_summary
from glyphoxa_mcp.pipeline.summary import (
    NOTHING_SAID,
    Sentence,
    lexical_vectors,
    retell,
    sentences_of,
    summarise,
    summary_parts,
)
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.recall.mentions import NamePattern

START = datetime(2026, 3, 7, 19, tzinfo=UTC)
TALK = [
    ("DM", "The rain drives you into the Red Kettle."),
    ("Brannoch", "Welcome, friends! Sit, eat, the stew is hot."),
    ("Kael", "We heard a caravan went missing on the road to Mirewatch."),
    ("Brannoch", "Find those wagons and I will pay you forty silver."),
    ("Lyra", "How are you all doing tonight, friends?"),
    ("Berrit", "I saw lights on the water the night it vanished."),
    ("Kael", "Deal. We promise to find it before the spring tide."),
    ("Tamsin", "Dorn, pay the man."),
    ("DM", "At the docks, the ferryman Osric waits by his boat."),
    ("Osric", "I know who took the caravan, but I want ten silver for it."),
    ("Kael", "Why should we trust you at all, ferryman?"),
    ("Osric", "The Town Watch took it, and Captain Vask sold the wagons in Mirewatch."),
    ("Lyra", "Then we go to Mirewatch at dawn and confront Vask."),
]
DOCKS_AT = START + timedelta(minutes=8)


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
            spoken_at=START + timedelta(minutes=i),
            duration_ms=None,
        )
        for i, (name, text) in enumerate(TALK)
    ]


def entity(id: str, type: str, name: str) -> Entity:
    return Entity(id=id, type=type, name=name, aliases=(), attributes={}, visibility=Visibility())


KNOWN = [
    entity("red-kettle", "location", "Red Kettle"),
    entity("docks", "location", "the Docks"),
    entity("osric", "npc", "Osric"),
    entity("vask", "npc", "Captain Vask"),
    entity("mirewatch", "location", "Mirewatch"),
    entity("brannoch", "npc", "Brannoch"),
    entity("grimjaw", "npc", "Grimjaw"),
]
NAMES = {e.id: e.name for e in KNOWN}
SCENES = [
    Scene(session_id="s1", started_at=START, location_id="red-kettle", present=("grimjaw",)),
    Scene(
        session_id="s1",
        started_at=DOCKS_AT,
        location_id="docks",
        present=("osric",),
        title="The ferryman",
    ),
]


def parts(scenes: list[Scene] = SCENES, budget: int = 110) -> list:  # type: ignore[type-arg]
    lines = entries()
    sentences = sentences_of(lines, scenes)
    return summary_parts(
        lines,
        scenes,
        sentences,
        lexical_vectors(sentences),
        NamePattern.of_entities(KNOWN),
        NAMES,
        budget,
    )


def said(speaker: str, text: str) -> Sentence:
    return Sentence(0, 0, speaker, text)


def test_each_scene_is_a_part_saying_where_and_who_first() -> None:
    kettle, docks = parts()
    assert kettle.scene_started_at == START and docks.scene_started_at == DOCKS_AT
    assert kettle.text.startswith(
        "On 7 March 2026 at Red Kettle, Brannoch, Kael, Lyra, Berrit and Tamsin spoke; "
        "Grimjaw was there too."
    )
    assert docks.text.startswith("On 7 March 2026 at the Docks (The ferryman), Osric, Kael")
    assert "Captain Vask sold the wagons in Mirewatch" in docks.text
    assert "Captain Vask" not in kettle.text
    assert render_summary([kettle, docks]) == f"{kettle.text}\n\n{docks.text}"


def test_lines_are_retold_in_the_third_person_not_quoted() -> None:
    kettle, docks = parts()
    assert "Tamsin told Dorn to pay the man." in kettle.text
    assert "Kael promised to find it before the spring tide." in kettle.text
    # The DM narrates: "you" is the party.
    assert "The rain drives the party into the Red Kettle." in kettle.text
    assert "\u201c" not in docks.text


def test_questions_and_pleasantries_are_left_out() -> None:
    text = render_summary(parts())
    assert "tonight" not in text and "trust" not in text and "stew" not in text


def test_the_first_person_becomes_the_speaker_and_you_the_one_spoken_to() -> None:
    pair = ["Caroline", "Melanie"]
    assert (
        retell(said("Caroline", "Yeah, I love the lake and my kids love it too."), pair)
        == "Caroline loves the lake and their kids love it too."
    )
    assert (
        retell(said("Melanie", "You're doing great with your painting!"), pair)
        == "Melanie said Caroline is doing great with Caroline's painting."
    )
    assert (
        retell(said("Berrit", "I saw lights on the water the night it vanished."), ["Kael"])
        == "Berrit saw lights on the water the night it vanished."
    )
    assert (
        retell(said("Caroline", "I've been to the support group twice."), pair)
        == "Caroline has been to the support group twice."
    )
    # Nobody clear to stand for "you": the line is quoted, not guessed at.
    assert (
        retell(said("Brannoch", "I will pay you forty silver."), ["Brannoch", "Kael", "Lyra"])
        == "Brannoch said, \u201cI will pay you forty silver.\u201d"
    )


def test_the_budget_bounds_the_words() -> None:
    short = parts(budget=40)
    assert len(render_summary(short).split()) < len(render_summary(parts()).split())
    # Where and who take most of a scene's least share: one line is told, and no more.
    for part in short:
        assert part.text.count(". ") == 1, part.text


def test_the_gist_tells_what_it_was_about_without_quoting_a_line() -> None:
    kettle, docks = parts()
    assert docks.gist.startswith("Osric, Kael and Lyra talked at the Docks about")
    assert "Mirewatch" in docks.gist and "Captain Vask" in docks.gist
    for gist in (kettle.gist, docks.gist):
        words = gist.rstrip(".").split()
        for _, line in TALK:
            for i in range(len(words) - 3):
                assert " ".join(words[i : i + 4]) not in line


def test_a_session_without_scenes_is_one_part_and_an_empty_one_says_so() -> None:
    (whole,) = parts(scenes=[])
    assert whole.scene_started_at is None
    assert whole.text.startswith("On 7 March 2026, Brannoch, Kael")
    assert summary_parts([], [], [], [], NamePattern.of_entities([]), {})[0].text == NOTHING_SAID


async def test_summarise_weighs_sentences_by_the_embedders_vectors(
    offline_embedder: LocalMiniLMEmbedder,
) -> None:
    found = await summarise(
        entries(), SCENES, offline_embedder, NamePattern.of_entities(KNOWN), NAMES
    )
    assert [p.scene_started_at for p in found] == [START, DOCKS_AT]
    assert "Captain Vask sold the wagons in Mirewatch" in found[1].text


SUMMARY_IN_ANOTHER_PROCESS = """
import json
from tests.pipeline.test_summary import parts
print(json.dumps([p.model_dump(mode="json") for p in parts()]))
"""


@pytest.mark.e2e
def test_the_same_lines_give_the_same_summary_in_every_process() -> None:
    made = []
    for seed in ("1", "2", "3"):
        result = subprocess.run(
            [sys.executable, "-c", SUMMARY_IN_ANOTHER_PROCESS],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        )
        made.append(json.loads(result.stdout))
    assert made[0] == made[1] == made[2] == [p.model_dump(mode="json") for p in parts()]
