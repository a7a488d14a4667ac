from __future__ import annotations

import gc

import pytest

from glyphoxa_mcp.correction.name_index import KnownName
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.recall.names_read import names_read, remembered
from glyphoxa_mcp.recall.redaction import SHOW_EVERYTHING, Redactor, inflections
from glyphoxa_mcp.recall.relationship_sentences import relationship_sentence


def test_built_in_and_custom_relationships_read_as_sentences() -> None:
    assert relationship_sentence("Grimjaw", "MEMBER_OF", "Smiths Guild") == (
        "Grimjaw is a member of Smiths Guild."
    )
    assert (
        relationship_sentence("Mira", "OWES_MONEY_TO", "Grimjaw") == "Mira owes money to Grimjaw."
    )


def test_sentences_naming_hidden_entities_are_dropped() -> None:
    redactor = Redactor.hiding(["Cult of Ash", "the Ashen Ones", "x"])
    text = "We met Grimjaw. The cult of ash meets below! Nobody saw the ashen ones? Then we left."
    assert redactor.redact(text) == "We met Grimjaw. Then we left."


def test_names_only_match_as_whole_words() -> None:
    redactor = Redactor.hiding(["Ash"])
    assert redactor.redact("The ashes are cold.") == "The ashes are cold."
    assert redactor.mentions_hidden("Ask Ash.")


def test_nothing_hidden_keeps_everything() -> None:
    assert SHOW_EVERYTHING.redact("Anything at all.") == "Anything at all."
    assert Redactor.hiding([]).redact("Still here.") == "Still here."


KNIVES = Redactor.hiding(["Salt Knives"])


@pytest.mark.parametrize(
    "said",
    [
        "He is a Salt Knife, I'd bet on it.",  # singular
        "The Salt Knifes again.",  # a wrong plural
        "the Salt Knives' business",  # possessive
        "a Salt Knife's blade",
        "The salt-knives run this harbour.",  # hyphenated, lower case
        "SaltKnives. Carved on every crate.",  # run together
        "SALT KNIVES",
    ],
)
def test_inflected_hyphenated_and_run_together_forms_are_hidden(said: str) -> None:
    assert KNIVES.mentions_hidden(said)


@pytest.mark.parametrize(
    "said",
    [
        # small capitals
        "The \ua731\u1d00\u029f\u1d1b \u1d0b\u0274\u026a\u1d20\u1d07\ua731 run the docks.",
        "The 5417 KN1V35 left a mark at the lighthouse.",  # digits for letters
        "The Sa|t Kn!ves own the lighthouse keeper.",  # symbols for letters
        "The Salt&nbsp;Knives met at the lighthouse.",  # markup
        "The Salt%20Knives met at the lighthouse.",  # a URL's escape
        "sevinK tlaS is scratched backwards on the door.",  # backwards
        "SaltKnivesgang tags cover the lighthouse stairs.",  # glued to a word after
        "theSaltKnivesrun the docks.",  # and before
    ],
)
def test_a_name_written_to_be_read_another_way_is_hidden(said: str) -> None:
    assert KNIVES.mentions_hidden(said)


@pytest.mark.parametrize(
    "said",
    [
        "Salt and knives on the table.",
        "The salt caves are dark.",
        "A knife of salt.",
        "We sold 3 sacks of salt and 12 knives at 5 silver.",
        "Tails, knives, nails & salt; 100% of it sold.",
        "The salted knife-rack is behind the bar.",
    ],
)
def test_the_words_of_a_name_apart_are_not_the_name(said: str) -> None:
    assert not KNIVES.mentions_hidden(said)


SHORT_NAMES = Redactor.hiding(["Ali", "Gail", "Tali", "Neil", "Li", "Hal", "Leo", "Ron", "Em"])


@pytest.mark.parametrize(
    "said",
    [
        "We all sail at 3!",  # read as leet, "all" would be Ali
        "What gall!",
        "He's tall, 6 feet!",
        "I'll do it, 1 way or another!",
        "Ha!",
        "130 gold, no less.",  # a number alone is no name
        "Neither this nor that.",  # backwards, "nor" is Ron
        "Give it to me.",
    ],
)
def test_a_short_name_is_not_found_by_chance_in_a_reading(said: str) -> None:
    assert not SHORT_NAMES.mentions_hidden(said)


def test_a_leet_reading_reads_the_folded_text() -> None:
    assert KNIVES.mentions_hidden("5alt Kn\u0456ves here")  # a Cyrillic i


def test_plurals_and_singulars_of_a_last_word() -> None:
    assert {"knife", "knives", "knifes"} <= inflections("knives")
    assert {"story", "stories"} <= inflections("story")
    assert {"sister", "sisters"} <= inflections("sisters")


def test_a_misspelling_is_hidden_when_correction_would_put_back_the_hidden_name() -> None:
    campaign = PhoneticCorrector(
        [
            KnownName("Salt Knives", "salt-knives"),
            KnownName("Saltmere", "saltmere"),
            KnownName("Old Salt Caves", "old-salt-caves"),
        ]
    )
    redactor = Redactor.hiding(["Salt Knives"], campaign, ["salt-knives"])
    assert redactor.mentions_hidden("The Sault Knives pay the watch.")
    assert redactor.mentions_hidden("Berrit's one of the Salt Nives, isn't he?")
    # What correction leaves alone, or puts back to a visible name, stays.
    assert not redactor.mentions_hidden("We sailed from Saltmere at dawn.")
    assert not redactor.mentions_hidden("The salt caves flood at high tide.")
    # Without the corrector only the spelled forms are found.
    assert not Redactor.hiding(["Salt Knives"]).mentions_hidden("The Sault Knives pay.")


def hiding_kazimir_and_lady_vale(*others: KnownName) -> Redactor:
    """A redactor hiding two people (Kazimir Drovak, Lady Seraphine Vale) from a viewer who
    knows the campaign's `others`."""
    hidden = [
        KnownName("Kazimir Drovak", "kazimir", True),
        KnownName("Lady Seraphine Vale", "seraphine", True),
    ]
    campaign = PhoneticCorrector([*hidden, *others])
    return Redactor.hiding([n.text for n in hidden], campaign, ["kazimir", "seraphine"])


@pytest.mark.parametrize(
    "said",
    [
        "Kazimir is waiting in the cellar.",
        "Drovak paid the watch captain.",
        "Kazimir's crew rowed out.",
        "Sir Kazimir signs nothing.",
        "Mr. Drovak owes us.",
        "Seraphine signs every contract.",
        "Lady Vale owns the fleet.",
        "Casimir is waiting in the cellar.",
    ],
)
def test_a_hidden_persons_short_name_is_hidden_spelled_right_or_not(said: str) -> None:
    redactor = hiding_kazimir_and_lady_vale(KnownName("Tarquel Osk", "tarquel", True))
    assert redactor.mentions_hidden(said)


def test_a_short_name_that_is_a_visible_entitys_own_name_or_part_of_one_stays() -> None:
    redactor = hiding_kazimir_and_lady_vale(
        KnownName("Kazimir", "kazimir-the-bard", True), KnownName("Drovak Keep", "keep", False)
    )
    # The bard the viewer knows answers to his own name.
    assert not redactor.mentions_hidden("Kazimir played the lute all night.")
    # A surname inside a longer name put back is that name's.
    assert not redactor.mentions_hidden("We rode to Drovak Keap at dawn.")
    # "vale" alone is English: no mention of Lady Vale.
    assert not redactor.mentions_hidden("We rode down into the vale at dusk.")
    assert redactor.mentions_hidden("Drovak paid the watch captain.")


def test_what_a_corrector_made_of_a_line_is_kept_out_of_the_cyclic_collectors_sight() -> None:
    """Thousands of lines' corrections stay remembered in a server: as sets, every full
    collection walked them all; a tuple of strings it stops tracking."""
    campaign = PhoneticCorrector([KnownName("Salt Knives", "salt-knives")])
    line = "The Sault Knives pay the watch."
    assert names_read(campaign, line) == ("salt-knives",)
    gc.collect()
    assert names_read(campaign, line) == ("salt-knives",)
    assert not gc.is_tracked(names_read(campaign, line))


def test_a_full_memory_of_answers_lets_the_oldest_go_not_all_of_them() -> None:
    worked: list[str] = []

    def answer(text: str) -> bool:
        worked.append(text)
        return len(text) > 3

    known: dict[str, bool] = {}
    for text in ("ash", "salt", "knives", "salt", "ash"):
        remembered(known, text, lambda text=text: answer(text), keep=2)
    # "ash" was let go to make room for "knives"; "salt" stayed and was not worked out again.
    assert worked == ["ash", "salt", "knives", "ash"]
    assert list(known) == ["knives", "ash"]
