"""The names a campaign's transcripts should be corrected to, prepared once per set of names."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from weakref import WeakKeyDictionary

from glyphoxa_mcp.correction.name_index import KnownName, prepared_names
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector, PhoneticSettings
from glyphoxa_mcp.correction.words import segments
from glyphoxa_mcp.domain.models import Entity
from glyphoxa_mcp.domain.vocabulary import EntityType

# The lists whose correctors are found by identity: the campaign's, and a few viewers' each.
LISTS_REMEMBERED = 32


# Whose names are people's: their surnames and given names alone are names too.
PEOPLE = frozenset({EntityType.NPC, EntityType.PLAYER})


def names_of(entities: Iterable[Entity]) -> tuple[KnownName, ...]:
    """Every entity's name and aliases, each pointing back at its entity."""
    return tuple(
        KnownName(spelling, entity.id, entity.type in PEOPLE)
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
        if all(
            before.index.names_of(entity_id)
            == _indexed(names_of([entity] if entity else []), before.index.forms)
            for entity_id, entity in changed.items()
        ):
            # Entities changed, their names did not (a secret kept, a touch): the same
            # corrector, and what it corrected stays valid.
            self._remember(entities, before)
            return before
        index = before.index.with_changes(changed.keys(), names_of(now))
        corrector = PhoneticCorrector(index, self.settings)
        touched = [n for i in changed for n in before.index.names_of(i)] + list(names_of(now))
        _remember_lineage(corrector, before, touched)
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


# A corrector patched from another, with a corrector of only the names that changed
# (before and after): where those find nothing, the two correct alike.
_LINEAGE: WeakKeyDictionary[PhoneticCorrector, tuple[PhoneticCorrector, PhoneticCorrector]] = (
    WeakKeyDictionary()
)


def _remember_lineage(
    corrector: PhoneticCorrector, parent: PhoneticCorrector, touched: list[KnownName]
) -> None:
    same_windows = (corrector.max_window, corrector.index.function_words) == (
        parent.max_window,
        parent.index.function_words,
    )
    # One generation back only: a lineage keeps its parent (and what it corrected) alive,
    # and a chain of them would keep every corrector since the first.
    _LINEAGE.pop(parent, None)
    if same_windows:
        _LINEAGE[corrector] = (parent, PhoneticCorrector(touched, corrector.settings))


def corrects_like(corrector: PhoneticCorrector, text: str) -> PhoneticCorrector | None:
    """The corrector `corrector` was patched from, when it provably corrects `text` the
    same way: every window of words it tries has the same names spelled like it and the
    same names sounding like it (those that changed are close to none of them), with the
    same windows tried. Otherwise None. What was corrected before an edit then need not be
    corrected again (hundreds of lines in a hot context; issue 17)."""
    lineage = _LINEAGE.get(corrector)
    if lineage is None:
        return None
    parent, changed = lineage
    threshold = corrector.settings.threshold
    for run in segments(text):
        for start in range(len(run)):
            key = ""
            for end in range(start, min(start + corrector.max_window, len(run))):
                key += run[end].key
                words = end + 1 - start
                if changed.index.may_name(key, words) and (
                    changed.index.spells(key) or changed.index.similar(key, threshold, words)
                ):
                    return None
    return parent


def _indexed(names: Iterable[KnownName], forms: bool) -> tuple[KnownName, ...]:
    """The names as an index keeps them (trimmed, each once, descriptions left out, with
    the shorter forms of people's names when it has them)."""
    return tuple(prepared.name for prepared in prepared_names(names, forms))


# One per process: the pipeline and the pre-fetch share prepared names.
SHARED_CORRECTORS = CorrectorCache()
