"""Find which known entities a text names, by name or alias, as whole words. (pure)"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from glyphoxa_mcp.storage.models import Entity

MIN_TERM_CHARS = 2


@dataclass(frozen=True)
class NamePattern:
    """One compiled pattern for many names; longer names win where names overlap."""

    pattern: re.Pattern[str] | None
    owners: dict[str, tuple[str, ...]]

    @classmethod
    def of_terms(cls, terms: Iterable[tuple[str, str]]) -> NamePattern:
        """From (term, owner id) pairs."""
        owners: dict[str, list[str]] = {}
        for term, owner in terms:
            cleaned = term.strip()
            if len(cleaned) >= MIN_TERM_CHARS:
                owners.setdefault(cleaned.casefold(), []).append(owner)
        if not owners:
            return cls(None, {})
        alternatives = "|".join(re.escape(t) for t in sorted(owners, key=len, reverse=True))
        pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)
        return cls(pattern, {term: tuple(ids) for term, ids in owners.items()})

    @classmethod
    def of_entities(cls, entities: Sequence[Entity]) -> NamePattern:
        return cls.of_terms(
            (spelling, entity.id)
            for entity in entities
            for spelling in (entity.name, *entity.aliases)
        )

    def found_in(self, text: str) -> bool:
        return self.pattern is not None and self.pattern.search(text) is not None

    def owners_in(self, text: str) -> list[str]:
        """Ids of the entities named in `text`, in order of first mention, each once."""
        if self.pattern is None:
            return []
        seen: dict[str, None] = {}
        for match in self.pattern.finditer(text):
            for owner in self.owners.get(match.group(0).casefold(), ()):
                seen.setdefault(owner, None)
        return list(seen)
