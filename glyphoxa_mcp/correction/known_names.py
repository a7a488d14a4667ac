"""The names a campaign's transcripts should be corrected to, prepared once per set of names."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

from glyphoxa_mcp.correction.name_index import KnownName
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector, PhoneticSettings
from glyphoxa_mcp.storage.models import Entity

# The lists whose correctors are found by identity: the campaign's, and a few viewers' each.
LISTS_REMEMBERED = 32
# Names dropped or added by patches before a corrector is rebuilt in one layer.
COMPACT_AT = 4_096


def names_of(entities: Iterable[Entity]) -> tuple[KnownName, ...]:
    """Every entity's name and aliases, each pointing back at its entity."""
    return tuple(
        KnownName(spelling, entity.id)
        for entity in entities
        for spelling in (entity.name, *entity.aliases)
    )


class CorrectorCache:
    """Prepared correctors keyed by the exact names they know: preparing 5,000 names takes a
    few hundred milliseconds, so it happens once, and again only when the names change.

    The lists they were prepared for are remembered by identity too (a campaign's names
    and each viewer's are the same list object while nothing changes), and a list patched
    from one of them gets a corrector patched from its corrector (`derived`): after a DM
    renames an entity, a millisecond instead of a second."""

    def __init__(self, settings: PhoneticSettings | None = None, size: int = 8) -> None:
        self.settings = settings or PhoneticSettings()
        self._size = size
        self._prepared: OrderedDict[tuple[KnownName, ...], PhoneticCorrector] = OrderedDict()
        # id(list) -> (the list, kept alive so that its id is not reused, its corrector).
        self._by_list: OrderedDict[int, tuple[Sequence[Entity], PhoneticCorrector]] = OrderedDict()

    def for_entities(self, entities: Sequence[Entity]) -> PhoneticCorrector:
        # The same list object again (a live session between re-reads, a cached scope) skips
        # rebuilding and hashing thousands of names.
        corrector = self.prepared_for(entities)
        if corrector is None:
            corrector = self.for_names(names_of(entities))
            self._remember(entities, corrector)
        return corrector

    def prepared_for(self, entities: Sequence[Entity]) -> PhoneticCorrector | None:
        """The corrector prepared for this very list object, if any."""
        found = self._by_list.get(id(entities))
        if found is None or found[0] is not entities:
            return None
        self._by_list.move_to_end(id(entities))
        return found[1]

    def derived(
        self,
        previous: Sequence[Entity],
        entities: Sequence[Entity],
        changed: Mapping[str, Entity | None],
    ) -> PhoneticCorrector | None:
        """The corrector for `entities`, patched from the one prepared for `previous`, from
        which `entities` differs by `changed` (id -> the entity now, None when gone);
        None when no corrector was prepared for `previous`."""
        ready = self.prepared_for(entities)
        if ready is not None:
            return ready
        before = self.prepared_for(previous)
        if before is None:
            return None
        now = sorted((e for e in changed.values() if e is not None), key=lambda e: e.id)
        index = before.index.with_changes(changed.keys(), names_of(now))
        if index.patched_names > COMPACT_AT:
            # Patches cost every lookup a little; past this many, one layer again.
            index = index.compacted()
        corrector = PhoneticCorrector(index, self.settings)
        self._remember(entities, corrector)
        return corrector

    def _remember(self, entities: Sequence[Entity], corrector: PhoneticCorrector) -> None:
        self._by_list[id(entities)] = (entities, corrector)
        self._by_list.move_to_end(id(entities))
        while len(self._by_list) > LISTS_REMEMBERED:
            self._by_list.popitem(last=False)

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
