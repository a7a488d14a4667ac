"""What ordinary English looks like, so that ordinary speech is left alone.

Fantasy names are often built from everyday words ("Hollow Stair", "Red Kettle"), and their
mishearings are everyday words too. Word frequencies (from pyspellchecker's English list,
counted over film subtitles, i.e. speech) tell a common word from a rare one.
"""

from __future__ import annotations

import functools
from functools import cache

# Articles, pronouns, prepositions, conjunctions and auxiliaries: words that join a phrase
# rather than carry it.
_FUNCTION_WORDS = """
a an the of to in on at by for from with into onto over under about as and or but nor so if
is are was were be been am it its he she they we you i me him her them us my your our their
this that these those there here do does did has have had will would can could shall should
may might must not no up out off than then
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
# Pronouns and auxiliaries: a phrase with one of these inside is a clause ("the crown is
# gold"), and a name is a noun phrase ("Lantern of Osk", "Sister Anwyn Tull").
_CLAUSE_WORDS = """
is are was were be been am it he she they we you i me him her them us do does did has have
had will would can could shall should may might must
"""
CLAUSE_WORDS = frozenset(_CLAUSE_WORDS.split())
# Hesitations a transcriber writes down, even in the middle of a name ("Halvard, uh, Penn").
FILLERS = frozenset(["uh", "uhm", "um", "umm", "er", "erm", "ah", "eh", "hm", "hmm", "mm"])
# A name is stored without an article, and a phrase after one of these is an ordinary noun
# phrase ("this hollow stare", "a glass world"), not a name.
_DETERMINERS = (
    "a an this that these those his her my your our their its some any every each no another"
)
DETERMINERS = frozenset(_DETERMINERS.split())
_INFLECTIONS = ("ing", "ed", "es", "s")


@cache
def _frequencies() -> tuple[dict[str, int], int]:
    from spellchecker import SpellChecker

    counts = SpellChecker(language="en", distance=1).word_frequency
    return counts.dictionary, counts.total_words


def load_word_frequencies() -> None:
    """Load the word list now rather than on the first correction."""
    _frequencies()


@functools.lru_cache(maxsize=65_536)
def per_million(word: str) -> float:
    """How often the word occurs in English speech, per million words."""
    counts, total = _frequencies()
    return counts.get(word.casefold(), 0) * 1_000_000 / total


# The word list counts American spellings; the British ones are the same words.
_BRITISH_ENDINGS = (("our", "or"), ("tre", "ter"), ("ise", "ize"), ("yse", "yze"), ("ogue", "og"))


@functools.lru_cache(maxsize=65_536)
def frequency(word: str) -> float:
    """`per_million` of the word, or of its American spelling when that is more frequent
    ("harbour" is as English as "harbor")."""
    lowered = word.casefold()
    found = per_million(lowered)
    for british, american in _BRITISH_ENDINGS:
        if lowered.endswith(british) and len(lowered) > len(british) + 1:
            found = max(found, per_million(lowered[: -len(british)] + american))
    return found


def inflection(word: str, stem_per_million: float) -> str | None:
    """The ending by which the word inflects an ordinary word ("folded" -> "ed", "cinders"
    -> "s"), if it does: a stem at least this frequent, as it is or with an "e"."""
    lowered = word.casefold()
    for suffix in _INFLECTIONS:
        stem = lowered[: -len(suffix)]
        if not lowered.endswith(suffix) or len(stem) < 3:
            continue
        if any(per_million(s) >= stem_per_million for s in (stem, stem + "e")):
            return suffix
    return None
