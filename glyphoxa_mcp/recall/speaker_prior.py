"""Which speakers a query names, and which candidates they spoke. (pure)

"What does Mara do to relax?" is about what Mara said: the lines she spoke are where her
answer is, while lines that merely address her ("Thanks, Mara!") share the name and little
else. A speaker counts as named when every word of their name is a word of the query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def words_of(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


def named_speakers(query: str, speaker_names: Iterable[str]) -> frozenset[str]:
    """The speaker names (as given) whose words all occur in the query; possessives count
    ("Mara's")."""
    query_words = set()
    for word in words_of(query):
        query_words.add(word)
        if word.endswith("'s"):
            query_words.add(word[:-2])
    named = set()
    for name in speaker_names:
        parts = words_of(name)
        if parts and all(part in query_words for part in parts):
            named.add(name)
    return frozenset(named)


def spoken_share(speakers: Sequence[str], named: frozenset[str]) -> float:
    """The share of a candidate's lines (given by their speakers' names) spoken by a named
    speaker."""
    if not speakers:
        return 0.0
    return sum(speaker in named for speaker in speakers) / len(speakers)
