"""Words of a transcript line with their character offsets. (pure)

A name may only be matched within a run of words that no punctuation interrupts ("Carol,
more chips?" is not "Carrowmoor"), and a trailing possessive stays outside the replaced span
("bran nock's arm" -> "Brannoch's arm").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Letters and digits, with apostrophes and hyphens inside a word ("Ka'vesh", "Oru-Tambe").
_WORD = re.compile(r"[^\W_]+(?:['\u2019\-][^\W_]+)*")
_NOT_LETTERS = re.compile(r"[\W_]+")
_POSSESSIVE = re.compile(r"['\u2019]s$", re.IGNORECASE)
_APOSTROPHES = "'\u2019"


@dataclass(frozen=True, slots=True)
class Word:
    start: int
    end: int  # before a trailing possessive
    text: str  # without a trailing possessive
    lowered: str
    key: str
    # The word as a dictionary writes it, for telling English from a name: a dropped "g"
    # restored ("chillin'" -> "chilling"); otherwise `lowered`.
    standard: str


def letters(text: str) -> str:
    """Case-folded letters and digits only: "Tal'Vessin" and "tal vessin" both -> "talvessin"."""
    return _NOT_LETTERS.sub("", text.casefold())


def ascii_letters(key: str) -> str:
    """The ASCII form the phonetic code needs: "Æsir" -> "aesir", "Zoë" -> "zoe"."""
    if key.isascii():
        return key
    folded = unicodedata.normalize("NFKD", key.replace("æ", "ae").replace("ø", "o"))
    return "".join(ch for ch in folded if ch.isascii() and ch.isalnum())


def segments(text: str) -> list[list[Word]]:
    """The runs of words that no punctuation interrupts, in order."""
    runs: list[list[Word]] = []
    previous_end: int | None = None
    for match in _WORD.finditer(text):
        start, end = match.span()
        word_text = match.group()
        if len(word_text) > 2 and _POSSESSIVE.search(word_text):
            end -= 2
            word_text = word_text[:-2]
        gap = text[previous_end:start] if previous_end is not None else ""
        if previous_end is None or gap.strip():
            runs.append([])
        lowered = word_text.casefold()
        standard = lowered
        if lowered.endswith("in") and len(lowered) > 3 and text[end : end + 1] in _APOSTROPHES:
            standard = lowered + "g"
        runs[-1].append(Word(start, end, word_text, lowered, letters(word_text), standard))
        previous_end = match.end()
    return runs
