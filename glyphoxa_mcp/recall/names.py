"""Resolve what a model or a DM calls an entity to the entities it may mean. (pure)

Exact name, then alias, then a partial match, then a misspelling: a speech model asking about
"Grimjw" or "the blacksmith" should still find Grimjaw.
"""

from __future__ import annotations

import bisect
import copy
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

from glyphoxa_mcp.correction.rebuild import Rebuild
from glyphoxa_mcp.domain.models import Entity

MatchKind = Literal["exact", "alias", "partial", "fuzzy"]
_KIND_RANK: dict[MatchKind, int] = {"exact": 0, "alias": 1, "partial": 2, "fuzzy": 3}
_ARTICLE = re.compile(r"^(the|a|an)\s+")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
MIN_FUZZY_SIMILARITY = 0.88
MIN_PARTIAL_CHARS = 3
# Entities changed since an index was built beyond which it is built again, in a thread:
# each match searches the changed ones' small index too, and rebuilding that small index is
# what a patch costs. Past the larger number (rebuilds failing), it is built in place.
REBUILD_AT = 256
MAX_PATCHED_ENTITIES = 4_096
# Jaro-Winkler adds at most 4 x 0.1 of what Jaro leaves to 1, so reaching 0.88 takes a Jaro
# similarity of 0.8: (m/|a| + m/|b| + (m - t)/m) / 3 >= 0.8 with the last term at most 1,
# so m (the matching characters, at most the letters the two share) must bring
# m/|a| + m/|b| to 1.4. Spellings that cannot are not compared (a tiny slack for rounding).
_MIN_SHARED_RATIO = 3 * (1 - (1 - MIN_FUZZY_SIMILARITY) / (1 - 4 * 0.1)) - 1 - 1e-9
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
_LETTER_INDEX = np.zeros(128, dtype=np.intp)
_LETTER_INDEX[[ord(letter) for letter in _ALPHABET]] = np.arange(len(_ALPHABET))


@dataclass(frozen=True)
class NameMatch:
    entity: Entity
    matched: str
    kind: MatchKind
    score: float


def words(text: str) -> str:
    """Lower-case ASCII words without a leading article: "The Red-Kettle" -> "red kettle"."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    spaced = _NOT_ALNUM.sub(" ", ascii_text.replace("'", "")).strip()
    return _ARTICLE.sub("", spaced)


def compact(text: str) -> str:
    """Letters and digits only, so spacing, hyphens and apostrophes never matter."""
    return words(text).replace(" ", "")


def _spellings(entity: Entity) -> Iterable[tuple[str, bool]]:
    yield entity.name, False
    for alias in entity.aliases:
        yield alias, True


# Separates spellings in the strings searched for partial matches; never in a normalised name.
_GAP = "\x00"


class NameIndex:
    """Many entities' spellings, normalised once, to match names against again and again.

    `match` gives what comparing the query with every spelling in turn gives (exact, then
    alias, then partial, then Jaro-Winkler at least MIN_FUZZY_SIMILARITY), without a Python
    loop over the spellings: exact ones are looked up, partial ones found by searching one
    string of all of them, and the similarity of all of them computed in one rapidfuzz call
    (its Jaro-Winkler scores are jellyfish's, to the last bit). With 10,000 entities that is
    about a millisecond instead of tens.
    """

    def __init__(self, entities: Sequence[Entity]) -> None:
        # A patched index: these entities' spellings here are stale, and their current ones
        # (and new entities') are in `_extra` (see `with_changes`).
        self._dropped: frozenset[str] = frozenset()
        self._extra: NameIndex | None = None
        # Which patch last changed each entity, for a rebuild to take the later ones on.
        self._changed_at: dict[str, int] = {}
        self._generation = 0
        self._rebuild: Rebuild[NameIndex] | None = None
        self.entities = list(entities)
        self._owner: list[int] = []
        self._texts: list[str] = []
        self._aliases: list[bool] = []
        self._keys: list[str] = []
        self._exact: dict[str, list[int]] = {}
        word_forms = []
        for position, entity in enumerate(self.entities):
            for text, is_alias in _spellings(entity):
                key = compact(text)
                if not key:
                    continue
                self._exact.setdefault(key, []).append(len(self._keys))
                self._owner.append(position)
                self._texts.append(text)
                self._aliases.append(is_alias)
                self._keys.append(key)
                word_forms.append(f" {words(text)} ")
        self._words, self._word_starts = _joined(word_forms)
        self._joined_keys, self._key_starts = _joined(self._keys)
        self._letters = _letter_counts(self._keys)
        self._lengths = np.array([len(key) for key in self._keys], dtype=np.float64)

    def with_changes(self, changed: Mapping[str, Entity | None]) -> NameIndex:
        """This index with the `changed` entities as they are now (None: gone), without
        normalising every spelling again (a third of a second for 10,000 entities).

        The result matches exactly what a fresh index over the same entities would: each
        entity is ranked by its own best spelling and the ranking is a total order
        (`_order`), so the best `limit` of all are the best `limit` of the best `limit` of
        the unchanged entities and of the changed ones. Past REBUILD_AT changed entities a
        fresh index is built in a thread (correction/rebuild.py), and a later patch starts
        from it once it is ready."""
        generation = self._generation + 1
        changed_at = {**self._changed_at, **dict.fromkeys(changed, generation)}
        extra = [e for e in (self._extra.entities if self._extra else []) if e.id not in changed]
        extra += [e for e in changed.values() if e is not None]
        rebuild = self._rebuild
        if rebuild is not None and rebuild.result is not None:
            # Changes made since the rebuild started go on top of it.
            since = rebuild.generation
            newer = {i for i, at in changed_at.items() if at > since}
            return rebuild.result._patched(
                frozenset(newer),
                [e for e in extra if e.id in newer],
                {i: changed_at[i] for i in newer},
                generation,
                None,
            )
        dropped = self._dropped | changed.keys()
        if len(extra) > REBUILD_AT and (rebuild is None or rebuild.failed):
            current = [e for e in self.entities if e.id not in dropped] + extra
            if len(extra) > MAX_PATCHED_ENTITIES:
                return NameIndex(current)  # rebuilds keep failing: build it here
            rebuild = Rebuild(lambda: NameIndex(current), generation)
        return self._patched(dropped, extra, changed_at, generation, rebuild)

    def _patched(
        self,
        dropped: frozenset[str],
        extra: list[Entity],
        changed_at: dict[str, int],
        generation: int,
        rebuild: Rebuild[NameIndex] | None,
    ) -> NameIndex:
        patched = copy.copy(self)
        patched._dropped = dropped
        patched._extra = NameIndex(extra) if dropped or extra else None
        patched._changed_at = changed_at
        patched._generation = generation
        patched._rebuild = rebuild
        return patched

    def match(
        self,
        query: str,
        limit: int = 10,
        accept: Callable[[Entity], bool] | None = None,
    ) -> list[NameMatch]:
        """Entities `query` may name, best first: each entity once, by its best spelling;
        only entities `accept` takes, when given."""
        if self._extra is None:
            return self._match(query, limit, accept)
        dropped = self._dropped

        def unchanged(entity: Entity) -> bool:
            return entity.id not in dropped and (accept is None or accept(entity))

        found = self._match(query, limit, unchanged) + self._extra.match(query, limit, accept)
        return sorted(found, key=_order)[:limit]

    def _match(
        self, query: str, limit: int, accept: Callable[[Entity], bool] | None
    ) -> list[NameMatch]:
        query_words, query_key = words(query), compact(query)
        if not query_key:
            return []
        found: dict[int, tuple[MatchKind, float]] = {}
        for spelling in self._exact.get(query_key, ()):
            found[spelling] = ("alias" if self._aliases[spelling] else "exact"), 1.0
        named = {self._owner[s] for s in found}
        if accept is not None:
            named = {owner for owner in named if accept(self.entities[owner])}
        # Partial and fuzzy matches rank after exact and alias ones: with `limit` entities
        # named exactly already, they could not make the list.
        if len(named) < limit:
            self._similar(query_words, query_key, found)
        best: dict[int, NameMatch] = {}
        # In spelling order, so that of equally good spellings an entity keeps its first.
        for spelling in sorted(found):
            entity = self.entities[self._owner[spelling]]
            if accept is not None and not accept(entity):
                continue
            kind, score = found[spelling]
            candidate = NameMatch(entity, self._texts[spelling], kind, score)
            current = best.get(self._owner[spelling])
            if current is None or _order(candidate) < _order(current):
                best[self._owner[spelling]] = candidate
        return sorted(best.values(), key=_order)[:limit]

    def _similar(
        self, query_words: str, query_key: str, found: dict[int, tuple[MatchKind, float]]
    ) -> None:
        """Add the partial and fuzzy matches to `found` (a spelling keeps a better kind)."""
        if len(query_key) >= MIN_PARTIAL_CHARS:
            partial = _find_all(self._words, f" {query_words} ", self._word_starts)
            partial |= _find_all(self._joined_keys, _GAP + query_key, self._key_starts, skip=1)
            for spelling in partial:
                found.setdefault(spelling, ("partial", len(query_key) / len(self._keys[spelling])))
        candidates = self._could_be_similar(query_key)
        for _, similarity, position in process.extract(
            query_key,
            [self._keys[spelling] for spelling in candidates],
            scorer=JaroWinkler.similarity,
            score_cutoff=MIN_FUZZY_SIMILARITY,
            limit=None,
        ):
            found.setdefault(int(candidates[position]), ("fuzzy", similarity))

    def _could_be_similar(self, query_key: str) -> np.ndarray:
        """The spellings that share enough letters with `query_key` to be similar enough
        (see _MIN_SHARED_RATIO): with 12,000 spellings, a few dozen instead of all of them."""
        if not self._keys:
            return np.empty(0, dtype=np.intp)
        shared = np.zeros(len(self._keys), dtype=np.int32)
        for letter in set(query_key):
            row = self._letters[_ALPHABET.index(letter)]
            shared += np.minimum(row, min(query_key.count(letter), 255))
        ratio = shared * (1 / len(query_key) + 1 / self._lengths)
        return np.flatnonzero(ratio >= _MIN_SHARED_RATIO)


def _letter_counts(keys: Sequence[str]) -> np.ndarray:
    """How often each letter of _ALPHABET occurs in each compact() key: one row per letter,
    so that a query reads only the rows of its own letters. Counted in one pass over all
    the keys' characters (a count per letter and key took a second with 12,000 keys)."""
    codes = np.frombuffer("".join(keys).encode("ascii"), dtype=np.uint8)
    owners = np.repeat(np.arange(len(keys)), [len(key) for key in keys])
    letters = _LETTER_INDEX[codes]
    counts = np.bincount(letters * len(keys) + owners, minlength=len(_ALPHABET) * len(keys))
    return np.minimum(counts, 255).astype(np.uint8).reshape(len(_ALPHABET), len(keys))


def _joined(parts: Sequence[str]) -> tuple[str, list[int]]:
    """The parts in one string, each after a gap, and where each part starts."""
    starts = []
    position = 0
    for part in parts:
        starts.append(position + len(_GAP))
        position += len(_GAP) + len(part)
    return "".join(_GAP + part for part in parts), starts


def _find_all(haystack: str, needle: str, starts: list[int], skip: int = 0) -> set[int]:
    """The parts (by position in `starts`) that contain `needle`; a needle starting with the
    gap (`skip` = its length) finds the parts that begin with the rest of it."""
    hits = set()
    at = haystack.find(needle)
    while at >= 0:
        part = bisect.bisect_right(starts, at + skip) - 1
        hits.add(part)
        following = starts[part + 1] if part + 1 < len(starts) else len(haystack)
        at = haystack.find(needle, following - len(_GAP))
    return hits


def match_names(query: str, entities: Sequence[Entity], limit: int = 10) -> list[NameMatch]:
    """Entities `query` may name, best first: each entity once, by its best spelling."""
    return NameIndex(entities).match(query, limit)


def _order(match: NameMatch) -> tuple[int, float, str, str]:
    return (_KIND_RANK[match.kind], -match.score, match.entity.name, match.entity.id)
