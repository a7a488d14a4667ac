"""How well a text matches the words a DM searched for: the desk's search lists what holds
the words first, most of them first, and leaves out what holds none of them. (pure)

A word matches itself and its plain English endings ("crown": "crowns", "crowned",
"Crown's"); words too common to say what a text is about ("the", "of") count only when the
query has no other."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_ENDINGS = ("", "s", "es", "'s", "d", "ed", "ing")
_STOP = frozenset(
    _WORD.findall(
        "a an and are as at be by did do does for from had has have he her his how i in is "
        "it its of on or she that the their them they this to was were what when where who "
        "why with you"
    )
)


def words_of(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


def _same_word(wanted: str, found: str) -> bool:
    if found.startswith(wanted):
        return found[len(wanted) :] in _ENDINGS
    return wanted.startswith(found) and wanted[len(found) :] in _ENDINGS


@dataclass(frozen=True)
class WordMatch:
    """How a text holds the query: how many of its words, and whether the whole query."""

    words: int
    phrase: bool

    @property
    def found(self) -> bool:
        return self.words > 0 or self.phrase


@dataclass(frozen=True)
class WordQuery:
    words: tuple[str, ...]
    """The query's words, each once, without the common ones (unless it has only those)."""
    phrase: str

    @classmethod
    def of(cls, query: str) -> WordQuery:
        every = list(dict.fromkeys(words_of(query)))
        telling = [word for word in every if word not in _STOP]
        return cls(tuple(telling or every), " ".join(query.casefold().split()))

    def match(self, text: str) -> WordMatch:
        held = set(words_of(text))
        words = sum(1 for wanted in self.words if any(_same_word(wanted, w) for w in held))
        whole = bool(self.phrase) and self.phrase in " ".join(text.casefold().split())
        return WordMatch(words, whole)

    def ranked(self, items: Iterable[T], text_of: Callable[[T], str]) -> list[T]:
        """The items whose text holds a word of the query (or the whole query, as part of a
        word: a name half typed), most of its words first, then those holding it whole, each
        group in the order given."""
        matches = [(self.match(text_of(item)), item) for item in items]
        found = [(match, item) for match, item in matches if match.found]
        found.sort(key=lambda pair: (-pair[0].words, not pair[0].phrase))
        return [item for _, item in found]
