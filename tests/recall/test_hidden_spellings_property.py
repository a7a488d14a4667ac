"""Property: a random hidden name, spelled by any mix of the red team's families and said
anywhere in a line (or split across two), is withheld; a line that does not hold it is not.
Every surface an NPC reads judges its text through this Redactor (tests/server/
test_red_team.py shows the families withheld end to end over MCP)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphoxa_mcp.recall.redaction import Redactor

# Names are drawn from the first half of the alphabet and the talk around them from the
# second, so a line holds the name only where the test put it.
NAME_LETTERS = "abcdefghijkl"
TALK_LETTERS = "nopqrstuvwxyz"
CYRILLIC_LOOK_ALIKES = {"a": "\u0430", "e": "\u0435", "c": "\u0441", "i": "\u0456", "k": "\u043a"}
FULLWIDTH_OFFSET = 0xFEE0

name_words = st.lists(st.text(NAME_LETTERS, min_size=3, max_size=7), min_size=1, max_size=3)
talk = st.lists(st.text(TALK_LETTERS, min_size=1, max_size=8), min_size=0, max_size=6)


def _capitalised(words: list[str]) -> str:
    return " ".join(word.capitalize() for word in words)


def _per_letter(word: str, change: str) -> str:
    out = []
    for letter in word:
        if change == "cyrillic":
            out.append(CYRILLIC_LOOK_ALIKES.get(letter.lower(), letter))
        elif change == "fullwidth" and letter.isascii() and letter.isalpha():
            out.append(chr(ord(letter) + FULLWIDTH_OFFSET))
        elif change == "accents":
            out.append(unicodedata.normalize("NFD", letter + "\u0301"))
        elif change == "zero-width":
            out.append(letter + "\u200b")
        elif change == "soft-hyphen":
            out.append(letter + "\u00ad")
        else:
            out.append(letter)
    return "".join(out)


@st.composite
def spellings(draw: st.DrawFn, words: list[str]) -> str:
    """The name in one family's spelling, or a mix of two."""
    joiner = draw(
        st.sampled_from([" ", "_", "-", "/", ".", "\u2014", "\u2010", "\u2026", ", ", ""])
    )
    case = draw(st.sampled_from(["title", "lower", "upper", "camel"]))
    if case == "camel":
        spelled = "".join(w.capitalize() for w in words)
    else:
        cased = [w.title() if case == "title" else getattr(w, case)() for w in words]
        spelled = joiner.join(cased)
    family = draw(
        st.sampled_from(
            ["plain", "cyrillic", "fullwidth", "accents", "zero-width", "soft-hyphen", "letters"]
        )
    )
    if family == "letters":
        spacer = draw(st.sampled_from([" ", ".", "-"]))
        spelled = spacer.join(letter for letter in spelled if letter.isalpha())
    else:
        spelled = _per_letter(spelled, family)
    wrap = draw(st.sampled_from(["{}", "*{}*", "**{}**", '"{}"', "`{}`", "anti-{}", "{}-gang"]))
    return wrap.format(spelled)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data(), name_words, talk, talk)
def test_a_hidden_name_in_any_spelling_is_withheld(
    data: st.DataObject, words: list[str], before: list[str], after: list[str]
) -> None:
    redactor = Redactor.hiding([_capitalised(words)])
    spelled = data.draw(spellings(words))
    line = " ".join([*before, spelled, *after])
    assert redactor.mentions_hidden(line), (line, words)


@settings(max_examples=200, deadline=None)
@given(name_words, talk, talk, st.integers(min_value=1))
def test_a_name_split_between_two_lines_withholds_both(
    words: list[str], before: list[str], after: list[str], cut: int
) -> None:
    name = _capitalised(words)
    redactor = Redactor.hiding([name])
    at = name.index(" ") if " " in name and cut % 2 else 1 + cut % (len(name) - 1)
    first = " ".join([*before, name[:at]])
    second = " ".join([name[at:].lstrip(), *after])
    assert redactor.split_names([first, second]) == [True, True], (first, second)


@settings(max_examples=200, deadline=None)
@given(name_words, talk)
def test_a_line_without_the_name_is_not_withheld(words: list[str], said: list[str]) -> None:
    redactor = Redactor.hiding([_capitalised(words)])
    line = " ".join(said) or "nothing"
    assert not redactor.mentions_hidden(line)
    assert redactor.split_names([line, line]) == [False, False]
