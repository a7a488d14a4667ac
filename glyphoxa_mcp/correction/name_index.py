"""The known names, prepared once for fast sound-alike lookup. (pure)

Each name is keyed by its letters and by the Metaphone code of those letters taken as one
word, so a split mishearing ("dove wreck") meets the compound name ("Dovrek") on the code of
the whole window. Lookup goes through the codes' deletion neighbourhoods (SymSpell style):
every code with up to two letters dropped points at the names it came from, so finding the
names within a couple of code edits is a few dictionary lookups, however many names there are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import jellyfish
import numpy as np
from rapidfuzz.distance import Indel
from rapidfuzz.process import cdist

from glyphoxa_mcp.correction.words import ascii_letters, letters

_PARTS = re.compile(r"[\s'\u2019\-]+")
SIMILARITY_CACHE_SIZE = 65_536
_INDEL = Indel.normalized_similarity


@dataclass(frozen=True, slots=True)
class KnownName:
    """A spelling to restore: an entity's name or one of its aliases."""

    text: str
    entity_id: str | None = None


@dataclass(frozen=True, slots=True)
class PreparedName:
    name: KnownName
    key: str
    codes: tuple[str, ...]
    word_count: int  # words between spaces: "Captain Oriel Vask" -> 3
    parts: int  # hyphens and apostrophes split too: "Oru-Tambe" -> 2
    words: frozenset[str]


def _is_description(text: str) -> bool:
    # "the innkeeper", "the Kettle": how people refer to an entity, not a name speech-to-text
    # could garble; restoring it would turn "the little" into "the Kettle".
    return text.split()[0].casefold() in ("the", "a", "an")


def phonetic_codes(key: str) -> tuple[str, ...]:
    """Metaphone of the letters, plus a reading of "ch" as in "loch" ("Brannoch")."""
    plain = ascii_letters(key)
    codes = [jellyfish.metaphone(plain)] if plain else []
    if "ch" in plain:
        codes.append(jellyfish.metaphone(plain.replace("ch", "k")))
    return tuple(dict.fromkeys(code for code in codes if code))


def _deletions(code: str, max_edits: int) -> tuple[set[str], set[str]]:
    """The code with at most one letter dropped, and with two dropped (never below three
    letters, and only as far as max_edits allows)."""
    n = len(code)
    near = {code}
    if max_edits >= 1 and n > 3:
        near.update(code[:i] + code[i + 1 :] for i in range(n))
    far: set[str] = set()
    if max_edits >= 2 and n > 4:
        far.update(
            code[:i] + code[i + 1 : j] + code[j + 1 :] for i in range(n) for j in range(i + 1, n)
        )
    return near, far - near


def similarity(key: str, codes: tuple[str, ...], name: PreparedName) -> float:
    """How alike a heard window and a name are, by sound and by spelling, from 0 to 1."""
    by_sound = max(
        (Indel.normalized_similarity(a, b) for a in codes for b in name.codes), default=0.0
    )
    return (by_sound + Indel.normalized_similarity(key, name.key)) / 2


class NameIndex:
    def __init__(self, names: Iterable[KnownName], max_code_edits: int = 2) -> None:
        if not 0 <= max_code_edits <= 2:
            raise ValueError("max_code_edits must be 0, 1 or 2")
        self.max_code_edits = max_code_edits
        self.names: list[PreparedName] = []
        self._by_key: dict[str, list[PreparedName]] = {}
        # Codes with up to one letter dropped, and with two: a window and a name meet when
        # their codes agree after at most three dropped letters in all, never two a side.
        self._near: dict[str, set[int]] = {}
        self._far: dict[str, set[int]] = {}
        seen: set[tuple[str, str | None]] = set()
        for name in names:
            text = name.text.strip()
            key = letters(text)
            if not key or (text, name.entity_id) in seen or _is_description(text):
                continue
            seen.add((text, name.entity_id))
            prepared = PreparedName(
                name=KnownName(text, name.entity_id),
                key=key,
                codes=phonetic_codes(key),
                word_count=len(text.split()),
                parts=len([p for p in _PARTS.split(text) if p]),
                words=frozenset(text.casefold().split()),
            )
            position = len(self.names)
            self.names.append(prepared)
            self._by_key.setdefault(key, []).append(prepared)
            for code in prepared.codes:
                near, far = _deletions(code, max_code_edits)
                for variant in near:
                    self._near.setdefault(variant, set()).add(position)
                for variant in far:
                    self._far.setdefault(variant, set()).add(position)
        self._keys = [n.key for n in self.names]
        self._primary_codes = [n.codes[0] if n.codes else "" for n in self.names]
        self._alternate_codes = [n.codes[1] if len(n.codes) > 1 else "" for n in self.names]
        self._longest_code = max((len(c) for n in self.names for c in n.codes), default=0)
        self.longest_key = max((len(n.key) for n in self.names), default=0)
        self.has_article = any("the" in n.words for n in self.names)
        self.max_parts = max((n.parts for n in self.names), default=0)
        self._similar = lru_cache(maxsize=SIMILARITY_CACHE_SIZE)(self._similar_uncached)

    def __len__(self) -> int:
        return len(self.names)

    def spells(self, key: str) -> bool:
        """Whether some name has exactly these letters."""
        return key in self._by_key

    def exact(self, key: str) -> list[PreparedName]:
        """Names spelled with exactly these letters (case, spaces and punctuation aside)."""
        return self._by_key.get(key, [])

    def similar(
        self, key: str, floor: float = 0.0, words: int = 2
    ) -> tuple[tuple[PreparedName, float], ...]:
        """Names that sound like the letters at least this much, best first, with the score;
        `words` is how many words the letters were heard as."""
        return self._similar(key, floor, words > 1)

    def _similar_uncached(
        self, key: str, floor: float, several_words: bool
    ) -> tuple[tuple[PreparedName, float], ...]:
        codes = phonetic_codes(key)
        if min(map(len, codes), default=0) > self._longest_code + self.max_code_edits:
            return ()
        positions: set[int] = set()
        # One word heard is a name's letters give or take a syllable; only words heard
        # apart ("bran knock") add sounds of their own, and may drop two code letters.
        edits = self.max_code_edits if several_words else min(self.max_code_edits, 1)
        for code in codes:
            near, far = _deletions(code, edits)
            for variant in near:
                for index in (self._near, self._far):
                    found = index.get(variant)
                    if found:
                        positions |= found
            for variant in far:
                found = self._near.get(variant)
                if found:
                    positions |= found
        if not positions:
            return ()
        order = list(positions)
        by_letters = cdist([key], [self._keys[p] for p in order], scorer=_INDEL)[0]
        by_sound = cdist(codes, [self._primary_codes[p] for p in order], scorer=_INDEL).max(0)
        alternates = [self._alternate_codes[p] for p in order]
        if any(alternates):
            by_sound = np.maximum(by_sound, cdist(codes, alternates, scorer=_INDEL).max(0))
        scores = (by_letters + by_sound) / 2
        kept = np.flatnonzero(scores >= floor)
        ranked = kept[np.argsort(-scores[kept], kind="stable")]
        return tuple((self.names[order[i]], float(scores[i])) for i in ranked)
