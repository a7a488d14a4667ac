from __future__ import annotations

from glyphoxa_mcp.recall.event_lines import asks_when, tells_when
from glyphoxa_mcp.recall.search_tuning import SessionSearchTuning, one_step_away
from glyphoxa_mcp.recall.speaker_prior import named_speakers, spoken_share


def test_a_speaker_is_named_when_every_word_of_their_name_is_in_the_query() -> None:
    speakers = ["Mara", "Old Berrit", "Tom"]
    assert named_speakers("What does Mara do to relax?", speakers) == {"Mara"}
    assert named_speakers("Where is Old Berrit's boat?", speakers) == {"Old Berrit"}
    assert named_speakers("Is Berrit old?", speakers) == {"Old Berrit"}
    assert named_speakers("What did Tomas say?", speakers) == frozenset()
    assert named_speakers("mara and TOM", speakers) == {"Mara", "Tom"}


def test_spoken_share_counts_the_lines_of_named_speakers() -> None:
    named = frozenset({"Mara"})
    assert spoken_share(["Mara", "Tom", "Mara"], named) == 2 / 3
    assert spoken_share([], named) == 0.0


def test_questions_that_ask_when_and_lines_that_tell_when() -> None:
    assert asks_when("When did Mara go camping?")
    assert asks_when("In what year did the mill burn?")
    assert asks_when("How long ago did Tom leave?")
    assert not asks_when("What does Mara do when she is sad?")
    assert tells_when("We went camping last weekend, it was great")
    assert tells_when("I signed up for a pottery class yesterday.")
    assert tells_when("Two years ago I moved here")
    assert tells_when("See you on Friday")
    assert not tells_when("Camping is the best, I love the smell of the campfire")


def test_one_step_away_moves_each_number_alone() -> None:
    shipped = SessionSearchTuning(meaning_weight=0.5, fusion_k=20, speaker_weight=0.0)
    steps = one_step_away(shipped)
    assert steps["meaning_weight 0.25"].fusion_k == 20
    assert steps["fusion_k 40"].meaning_weight == 0.5
    assert steps["speaker_weight 1"].speaker_weight == 1.0
    assert all(
        sum(getattr(t, f) != getattr(shipped, f) for f in SessionSearchTuning.model_fields) == 1
        for t in steps.values()
    )
