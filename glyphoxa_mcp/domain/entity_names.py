"""A campaign's entities as names are matched and redacted against, at one version, and how
a newer version is made from an older one and the entities changed between them. (pure)

Reading 10,000 entities (their jsonb decoded) takes a few hundred milliseconds, more than a
tool call may; the change log (sql/025) names the few that changed, so after a DM's edit or
an extraction only those are read again and patched in.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from glyphoxa_mcp.domain.models import Entity

# The steps of changed ids a snapshot remembers, so that what was derived from an older
# snapshot (an NPC's scope not asked for a while) can be patched too; older than that, it is
# built again.
HISTORY_STEPS = 1024
# More entities changed at once than this (a campaign imported, a bulk edit), and a patch
# would cost about as much as reading everything: everything is read again.
MAX_PATCHED = 2_000


@dataclass(frozen=True)
class EntityChanges:
    """What changed after a version: the ids (deleted ones included) and the rows of those
    that still exist, current at `version`."""

    version: int
    complete: bool
    changed_ids: frozenset[str]
    entities: tuple[Entity, ...]


@dataclass(frozen=True)
class EntityNames:
    """Every entity of a campaign at `version`, in order of id (attributes left out, but for
    what names an episode), and which ids changed at the versions before it."""

    version: int
    entities: list[Entity]
    """Sorted by id; the same list object for as long as nothing changes, so that what is
    prepared from it can be found again by identity (CorrectorCache)."""
    history: tuple[tuple[int, frozenset[str]], ...] = ()
    """(version, ids changed up to it from the previous step), oldest first."""

    @functools.cached_property
    def by_id(self) -> Mapping[str, Entity]:
        return {entity.id: entity for entity in self.entities}

    @classmethod
    def read(cls, version: int, entities: Iterable[Entity]) -> EntityNames:
        return cls(version, sorted(entities, key=_id))

    def changed_since(self, version: int) -> frozenset[str] | None:
        """The ids changed after `version` up to this snapshot; None when this snapshot does
        not remember that far back."""
        if version == self.version:
            return frozenset()
        if version > self.version or not self.history or self.history[0][0] > version:
            return None
        changed: set[str] = set()
        for step_version, ids in self.history:
            if step_version > version:
                changed |= ids
        return frozenset(changed)

    def patched(self, changes: EntityChanges) -> EntityNames:
        """This snapshot with the changed entities replaced, added or removed."""
        if changes.version == self.version and not changes.changed_ids:
            return self
        current = {entity.id: entity for entity in changes.entities}
        by_id = self.by_id
        if all(by_id.get(i) == current.get(i) for i in changes.changed_ids):
            # A touch: nothing matching depends on changed (keep the same list object).
            entities = self.entities
        else:
            entities = _replaced(self.entities, changes.changed_ids, current)
            by_id = dict(by_id)
            for entity_id in changes.changed_ids:
                by_id.pop(entity_id, None)
            by_id.update(current)
        # With no history yet, it starts at this snapshot's version.
        start = () if self.history else ((self.version, frozenset[str]()),)
        history = (*start, *self.history, (changes.version, changes.changed_ids))
        patched = EntityNames(changes.version, entities, history[-HISTORY_STEPS:])
        patched.__dict__["by_id"] = by_id
        return patched


def _id(entity: Entity) -> str:
    return entity.id


def _replaced(
    entities: list[Entity], changed: frozenset[str], current: Mapping[str, Entity]
) -> list[Entity]:
    """`entities` (sorted by id) without the changed ones, then with their current rows;
    found by bisection, so that the cost is a copy of the list, not a pass over it."""
    return replaced_by_id(entities, changed, current.values())


def replaced_by_id(
    entities: Iterable[Entity], removed: Iterable[str], added: Iterable[Entity]
) -> list[Entity]:
    """A list of entities sorted by id, without `removed` and with `added` in their places."""
    kept = list(entities)
    for entity_id in removed:
        at = bisect.bisect_left(kept, entity_id, key=_id)
        if at < len(kept) and kept[at].id == entity_id:
            del kept[at]
    for entity in added:
        bisect.insort(kept, entity, key=_id)
    return kept


def visible_to(entity: Entity, npc_id: str | None) -> bool:
    """Whether the NPC (None: the DM) may know the entity: what SQL decides with
    `glyphoxa_visible` (sql/001) and `entity_visible` (sql_parts), decided here on the row
    read in the same snapshot as its names, so that a patched scope never pairs a name with
    a newer or older visibility (tests/views/test_scope_updates.py checks both agree)."""
    if npc_id is None or entity.id == npc_id:
        return True
    known_by = entity.visibility.known_by
    return npc_id in known_by or (not entity.visibility.secret and not known_by)
