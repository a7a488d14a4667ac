"""The names a campaign's transcripts should be corrected to, prepared once per set of names."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence

from glyphoxa_mcp.correction.name_index import KnownName
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector, PhoneticSettings
from glyphoxa_mcp.storage.models import Entity


def names_of(entities: Iterable[Entity]) -> tuple[KnownName, ...]:
    """Every entity's name and aliases, each pointing back at its entity."""
    return tuple(
        KnownName(spelling, entity.id)
        for entity in entities
        for spelling in (entity.name, *entity.aliases)
    )


class CorrectorCache:
    """Prepared correctors keyed by the exact names they know: preparing 5,000 names takes a
    few hundred milliseconds, so it happens once, and again only when the names change."""

    def __init__(self, settings: PhoneticSettings | None = None, size: int = 8) -> None:
        self.settings = settings or PhoneticSettings()
        self._size = size
        self._prepared: OrderedDict[tuple[KnownName, ...], PhoneticCorrector] = OrderedDict()
        self._last: tuple[Sequence[Entity], PhoneticCorrector] | None = None

    def for_entities(self, entities: Sequence[Entity]) -> PhoneticCorrector:
        # The same list object again (a live session between re-reads, a cached scope) skips
        # rebuilding and hashing thousands of names.
        last = self._last
        if last is not None and last[0] is entities:
            return last[1]
        corrector = self.for_names(names_of(entities))
        self._last = (entities, corrector)
        return corrector

    def for_names(self, names: Iterable[KnownName]) -> PhoneticCorrector:
        key = tuple(names)
        corrector = self._prepared.get(key)
        if corrector is None:
            corrector = PhoneticCorrector(key, self.settings)
            self._prepared[key] = corrector
            while len(self._prepared) > self._size:
                self._prepared.popitem(last=False)
        else:
            self._prepared.move_to_end(key)
        return corrector


# One per process: the pipeline and the pre-fetch share prepared names.
SHARED_CORRECTORS = CorrectorCache()
