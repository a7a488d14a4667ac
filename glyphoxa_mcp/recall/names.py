"""Resolve what a model or a DM calls an entity to the entities it may mean. (pure)

Exact name, then alias, then a partial match, then a misspelling: a speech model asking about
"Grimjw" or "the blacksmith" should still find Grimjaw.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import jellyfish

from glyphoxa_mcp.storage.models import Entity

MatchKind = Literal["exact", "alias", "partial", "fuzzy"]
_KIND_RANK: dict[MatchKind, int] = {"exact": 0, "alias": 1, "partial": 2, "fuzzy": 3}
_ARTICLE = re.compile(r"^(the|a|an)\s+")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
MIN_FUZZY_SIMILARITY = 0.88
MIN_PARTIAL_CHARS = 3


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


def _match(
    query_words: str, query_key: str, text: str, is_alias: bool
) -> tuple[MatchKind, float] | None:
    key = compact(text)
    if not key:
        return None
    if key == query_key:
        return ("alias" if is_alias else "exact"), 1.0
    if len(query_key) >= MIN_PARTIAL_CHARS and (
        f" {query_words} " in f" {words(text)} " or key.startswith(query_key)
    ):
        return "partial", len(query_key) / len(key)
    similarity = jellyfish.jaro_winkler_similarity(query_key, key)
    if similarity >= MIN_FUZZY_SIMILARITY:
        return "fuzzy", similarity
    return None


def match_names(query: str, entities: Sequence[Entity], limit: int = 10) -> list[NameMatch]:
    """Entities `query` may name, best first: each entity once, by its best spelling."""
    query_words, query_key = words(query), compact(query)
    if not query_key:
        return []
    best: dict[str, NameMatch] = {}
    for entity in entities:
        for text, is_alias in _spellings(entity):
            found = _match(query_words, query_key, text, is_alias)
            if found is None:
                continue
            candidate = NameMatch(entity, text, found[0], found[1])
            current = best.get(entity.id)
            if current is None or _order(candidate) < _order(current):
                best[entity.id] = candidate
    return sorted(best.values(), key=_order)[:limit]


def _order(match: NameMatch) -> tuple[int, float, str, str]:
    return (_KIND_RANK[match.kind], -match.score, match.entity.name, match.entity.id)
