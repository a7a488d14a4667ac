"""A hidden name is found in every spelling of the families a red team tries (issue 27), and
ordinary lines that share its words are not withheld."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.recall.name_spelling import fold, name_words
from glyphoxa_mcp.recall.redaction import HiddenForms, Redactor

HIDING = Redactor.hiding(["Salt Knives", "Red Kettle", "Ash", "Avery", "Vennacht"])

SPELLINGS = {
    "punctuation inside": [
        "the Salt_Knives",
        "Salt/Knives",
        "Salt\u2014Knives",
        "Salt\u2010Knives",
        "Salt.Knives",
        "Salt...Knives",
        "Salt\u2026Knives",
        "Salt, Knives",
        "Ven.nacht",
    ],
    "formatting": ["*Salt* *Knives*", "**Salt** __Knives__", '"Salt" "Knives"', "`Salt Knives`"],
    "invisible and look-alike": [
        "Salt\u200bKnives",
        "salt\u00adknives",
        "Salt\u200d Knives",
        "S\u0430lt Kniv\u0435s",  # Cyrillic a and e
        "\u0405alt \u041anives",  # Cyrillic Dze and Ka
        "\uff33\uff41\uff4c\uff54 \uff2b\uff4e\uff49\uff56\uff45\uff53",  # fullwidth
        "Sa\u0301lt Kni\u0300ves",  # combining accents
        "S\u00e1lt Kn\u00efves",
    ],
    "letter by letter": [
        "S a l t K n i v e s",
        "S.a.l.t K.n.i.v.e.s",
        "S-a-l-t-K-n-i-v-e-s",
        "s a l t knives",
    ],
    "compounds": [
        "salt-knives-gang",
        "SaltKnivesGang",
        "anti-salt-knives",
        "SALT-KNIVES-DEN",
        "thesaltknivesden",
        "#SaltKnives4ever",
        "VenNacht",
    ],
    "inflected": ["a Salt Knife", "the Salt-Knifes", "Salt Knives'"],
}
HARMLESS = [
    "Pass the salt, and the knives are in the drawer.",
    "The shared kettle is on the hob.",
    "She went to see the ashes of the old mill.",
    "It was a very good day at the crash site.",
    "The salty knives of the fishermen glint.",
    "Red wine and a kettle of fish.",
    "Saltmere Harbour in the fog.",
]


@pytest.mark.parametrize(
    "spelling", [s for family in SPELLINGS.values() for s in family], ids=lambda s: repr(s)
)
def test_every_spelling_of_a_hidden_name_is_found(spelling: str) -> None:
    assert HIDING.mentions_hidden(spelling)
    assert HIDING.mentions_hidden(f"Kael: I heard about {spelling} last night.")


@pytest.mark.parametrize("line", HARMLESS)
def test_ordinary_lines_that_share_the_words_are_not_withheld(line: str) -> None:
    assert not HIDING.mentions_hidden(line)


def test_a_name_split_between_two_lines_withholds_both() -> None:
    lines = ["They have a name: they call them the Salt", "Knives, remember that.", "Tea?"]
    assert not any(HIDING.mentions_hidden(line) for line in lines)
    assert HIDING.mentions_hidden_across(lines[0], lines[1])
    assert HIDING.split_names(lines) == [True, True, False]


def test_lines_that_only_end_and_start_with_the_words_apart_are_not_split_names() -> None:
    assert not HIDING.mentions_hidden_across("Pass the salt", "and then the knives")
    assert not HIDING.mentions_hidden_across("Salt Knives", "")


def test_prose_loses_both_sentences_of_a_split_name_and_keeps_the_rest() -> None:
    prose = "They met the Salt. Knives were drawn at once. Then they drank tea."
    assert HIDING.redact(prose) == "Then they drank tea."


def test_fold_keeps_a_line_readable() -> None:
    assert fold("S\u0430lt\u200b Kn\u00efves!") == "Salt Knives!"
    assert fold("plain ascii, untouched") == "plain ascii, untouched"


def test_words_say_where_white_space_parts_them() -> None:
    words = name_words("SaltKnives salt_knives S a l t")
    assert [w.letters for w in words] == ["salt", "knives", "salt", "knives", "s", "a", "l", "t"]
    assert [w.spaced for w in words] == [True, False, True, False, True, False, False, False]


def test_a_pair_of_lines_is_read_for_a_split_name_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hot context checks each pair of its last lines at every read: the answer for a pair
    is remembered, as for one line, and stays the answer."""
    redactor = Redactor.hiding(["Salt Knives"])
    read = []
    found_across = HiddenForms.found_across

    def counted(forms: HiddenForms, before: str, after: str) -> bool:
        read.append((before, after))
        return found_across(forms, before, after)

    monkeypatch.setattr(HiddenForms, "found_across", counted)
    pair = ("they call them the Salt", "Knives, remember that.")
    assert redactor.mentions_hidden_across(*pair) and redactor.mentions_hidden_across(*pair)
    assert not redactor.mentions_hidden_across("Pass the salt", "and the knives")
    assert not redactor.mentions_hidden_across("Pass the salt", "and the knives")
    assert read == [pair, ("Pass the salt", "and the knives")]
