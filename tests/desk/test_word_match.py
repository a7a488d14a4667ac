"""Matching the DM's search words: whole words with their plain endings, the common ones only
when nothing else was asked, most words first."""

from __future__ import annotations

from glyphoxa_mcp.desk.word_match import WordMatch, WordQuery


def test_a_word_matches_its_plain_endings_and_not_a_word_it_is_part_of() -> None:
    crown = WordQuery.of("Crown")

    assert crown.match("The crowns were lost.").words == 1
    assert crown.match("She crowned him.").words == 1
    assert crown.match("The Crown's price.").words == 1
    assert crown.match("A brown crowd.") == WordMatch(words=0, phrase=False)
    assert WordQuery.of("crowns").match("the crown").words == 1


def test_common_words_count_only_when_nothing_else_was_asked() -> None:
    assert WordQuery.of("the caves of the coast").words == ("caves", "coast")
    assert WordQuery.of("Who is there?").words == ("there",)
    assert WordQuery.of("who is it").words == ("who", "is", "it")


def test_items_holding_more_of_the_words_come_first_and_those_holding_none_are_left_out() -> None:
    texts = [
        "Dovrek is at Saltmere.",
        "Brannoch gives the quest The Missing Caravan.",
        "The iron caravan was last seen at Greywater Crossing.",
        "Iron from the hill mines.",
        "An ironclad ship.",
    ]

    ranked = WordQuery.of("iron caravan").ranked(texts, lambda text: text)

    assert ranked == [texts[2], texts[1], texts[3]]


def test_a_name_half_typed_is_found_after_whole_words() -> None:
    texts = ["Brannoch is at Red Kettle.", "Brann the Elder.", "Old Berrit."]

    assert WordQuery.of("Brann").ranked(texts, lambda text: text) == [texts[1], texts[0]]
