"""A viewer's scope: the entities it may know (as it may know them), the ids it may not, and
the redactor that keeps what is hidden out of the free text it reads.

Names are text too. An entity whose name holds the name of an entity hidden from the viewer
is hidden from it as well, except an episode (a session remembered in the graph): the
viewer knows that session happened, so it is shown by its date ("the session of
2026-03-21") instead of a title that would tell the secret. Aliases that name something
hidden are dropped.

A scope is built once and then patched (issue 17): after a DM's edit or an extraction the
next call reads only the entities that changed (EntityNames) and patches the scope it had,
in a few milliseconds, where building it from nothing takes most of a second at 10,000
entities, longer than a call may wait. `patched_scope` is exact, not an approximation: it
gives what `built_scope` gives for the same entities (tests/views/test_scope_updates.py
checks it after random edits); the docstrings say why each shortcut is safe.
"""

from __future__ import annotations

import bisect
import functools
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.domain.entity_names import (
    MAX_PATCHED,
    EntityNames,
    replaced_by_id,
    visible_to,
)
from glyphoxa_mcp.domain.episodes import session_of, untitled_name
from glyphoxa_mcp.domain.models import Entity, IdentitySnapshot, Neighbour
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.recall.name_windows import CampaignWindows
from glyphoxa_mcp.recall.names import NameIndex
from glyphoxa_mcp.recall.redaction import EMPTY_FORMS, SHOW_EVERYTHING, HiddenForms, Redactor
from glyphoxa_mcp.recall.relationship_sentences import type_words
from glyphoxa_mcp.storage.memory import CampaignMemory

# Where hidden names may be held in other names: one index per campaign memory, kept for as
# long as the memory lives (the App keeps one per campaign), shared by every viewer's scope.
_NAME_WINDOWS: weakref.WeakKeyDictionary[CampaignMemory, CampaignWindows] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class Scope:
    """One NPC's knowledge (None: the DM's): the entities it may know, as it may know them,
    the ids it may not, and a redactor for the hidden names in free text.

    Scopes are cached until an entity changes (see `scope_of`), so what is built from
    `known` for matching is built on first use and kept with it."""

    known: tuple[Entity, ...]
    hidden_ids: frozenset[str]
    redactor: Redactor
    basis: ScopeBasis | None = field(default=None, compare=False, repr=False)
    """What it was built from, to patch it with (None: a scope made by hand)."""

    @functools.cached_property
    def names(self) -> NameIndex:
        """The known entities' names, to resolve what a model calls one of them."""
        return NameIndex(self.known)

    @functools.cached_property
    def mentions(self) -> NamePattern:
        """The known entities' names, to find them in text."""
        return NamePattern.of_entities(self.known)

    @functools.cached_property
    def by_id(self) -> dict[str, Entity]:
        return {entity.id: entity for entity in self.known}

    @functools.cached_property
    def by_type(self) -> dict[EntityType, tuple[Entity, ...]]:
        """The known entities of each type, in alphabetical order."""
        grouped: dict[EntityType, list[Entity]] = {}
        for entity in sorted(self.known, key=lambda e: (e.name.lower(), e.id)):
            grouped.setdefault(entity.type, []).append(entity)
        return {entity_type: tuple(entities) for entity_type, entities in grouped.items()}

    def shown(self, entity: Entity) -> Entity | None:
        """The entity as this viewer may know it (renamed, aliases dropped), or None."""
        seen = self.by_id.get(entity.id)
        if seen is None:
            return None
        # `known` holds names only; the entity read keeps its attributes.
        if seen.name == entity.name and seen.aliases == entity.aliases:
            return entity
        return entity.model_copy(update={"name": seen.name, "aliases": seen.aliases})

    def shown_all(self, entities: Iterable[Entity]) -> list[Entity]:
        return [e for e in (self.shown(entity) for entity in entities) if e is not None]

    def shown_snapshot(
        self, snapshot: IdentitySnapshot, withheld_sessions: Collection[str] = ()
    ) -> IdentitySnapshot | None:
        """A snapshot with its entity and the other ends of its relationships as the viewer
        knows them, without what it may not know: facts naming it, and what was learned in
        a session it may not read."""
        entity = self.shown(snapshot.entity)
        if entity is None:
            return None
        related = []
        for item in snapshot.relationships:
            other = self.shown(item.other)
            rel = item.relationship
            if (
                other is not None
                and rel.provenance.session_id not in withheld_sessions
                and self.shows_relationship_type(rel.rel_type)
            ):
                related.append(item.model_copy(update={"other": other}))
        facts = tuple(
            fact
            if not self.redactor.mentions_hidden(fact.story_label or "")
            else fact.model_copy(update={"story_label": None})
            for fact in snapshot.facts
            if fact.session_id not in withheld_sessions
            and not self.redactor.mentions_hidden(fact.text)
        )
        return IdentitySnapshot(entity=entity, relationships=tuple(related), facts=facts)

    def shows_relationship_type(self, rel_type: str) -> bool:
        """Whether a relationship of this type may be shown: a type is the DM's free text
        ("SMUGGLES_FOR_SALT_KNIVES"), read as the sentence it makes is."""
        return not self.redactor.mentions_hidden(type_words(rel_type))

    def shown_neighbours(self, neighbours: Iterable[Neighbour]) -> list[Neighbour]:
        """Neighbours the viewer may know, reached through entities it may know, by a last
        hop whose type it may read."""
        kept = []
        for neighbour in neighbours:
            entity = self.shown(neighbour.entity)
            if (
                entity is None
                or any(step in self.hidden_ids for step in neighbour.path)
                or not self.shows_relationship_type(neighbour.via)
            ):
                continue
            kept.append(neighbour.model_copy(update={"entity": entity}))
        return kept


async def scope_of(memory: CampaignMemory, npc_id: str | None, version: int | None = None) -> Scope:
    """The scope of `npc_id` (None: the DM) at the current version of the campaign's
    entities (`version`, when the caller read it already): built once, then patched with
    what changed since (see the module)."""
    return await memory.entity_cache.get_updated(
        ("scope", npc_id),
        lambda: _scope(memory, npc_id),
        lambda previous: _updated_scope(memory, npc_id, previous),
        version,
    )


async def _scope(memory: CampaignMemory, npc_id: str | None) -> Scope:
    names = await memory.entity_names()
    if npc_id is None:
        return built_scope(names, None, None)
    # The campaign's corrector: a misspelling is hidden when correction would put it back
    # to a hidden name, not when it merely sounds like one.
    corrector = SHARED_CORRECTORS.for_entities(names.entities)
    name_windows(memory).cover(names)
    return built_scope(names, npc_id, corrector)


async def _updated_scope(memory: CampaignMemory, npc_id: str | None, previous: Scope) -> Scope:
    names = await memory.entity_names()
    basis = previous.basis
    if basis is None:
        return await _scope(memory, npc_id)
    changed = names.changed_since(basis.version)
    if changed is None and basis.version <= names.version:
        # Older than the snapshot remembers (a viewer not asked for a while): the log
        # says which ids changed since, up to now. Ids changed after `names` come too;
        # judged again with what `names` holds, they come out as before.
        logged = await memory.queries.entity_changes(basis.version)
        changed = logged.changed_ids if logged.complete else None
    if changed is None or len(changed) > MAX_PATCHED:
        return await _scope(memory, npc_id)
    if npc_id is None:
        # The DM knows every entity as it is: the changed ones are judged again, as seen.
        return _rejudged(
            previous, names, set(changed), {}, SHOW_EVERYTHING, EMPTY_FORMS, lambda e: e
        )
    campaign_corrector = SHARED_CORRECTORS.derived(
        basis.entities, names.entities, {i: names.by_id.get(i) for i in changed}
    ) or SHARED_CORRECTORS.for_entities(names.entities)
    return patched_scope(previous, names, changed, campaign_corrector, name_windows(memory))


def name_windows(memory: CampaignMemory) -> CampaignWindows:
    """The campaign's name windows (recall/name_windows.py), made on first use."""
    windows = _NAME_WINDOWS.get(memory)
    if windows is None:
        windows = _NAME_WINDOWS[memory] = CampaignWindows()
    return windows


@dataclass(frozen=True)
class ScopeBasis:
    """What a scope was built from, for the next patch to start from."""

    npc_id: str | None
    version: int
    entities: list[Entity]
    """The campaign's entities it was built from (the list object: its corrector is found
    by identity)."""
    withheld: Mapping[str, Entity]
    """The entities the viewer may not know (by visibility), as stored."""
    hidden_names: HiddenForms
    """The withheld entities' names (aliases aside): other names holding them are hidden."""
    altered: frozenset[str]
    """Visible entities not shown as stored: hidden by a name they hold, renamed, or with
    aliases dropped."""


def built_scope(
    names: EntityNames, npc_id: str | None, corrector: PhoneticCorrector | None
) -> Scope:
    """The scope of `npc_id` over every entity, from nothing."""
    everyone = names.entities
    if npc_id is None:
        basis = ScopeBasis(None, names.version, everyone, {}, EMPTY_FORMS, frozenset())
        return Scope(tuple(everyone), frozenset(), SHOW_EVERYTHING, basis)
    withheld = {e.id: e for e in everyone if not visible_to(e, npc_id)}
    redactor = Redactor.hiding(
        (spelling for entity in withheld.values() for spelling in (entity.name, *entity.aliases)),
        corrector,
        withheld,
    )
    hidden_names = HiddenForms.of(entity.name for entity in withheld.values())
    known = []
    hidden_ids = set(withheld)
    altered = set()
    for entity in everyone:
        if entity.id in withheld:
            continue
        shown = _as_seen(entity, redactor, hidden_names)
        if shown is None:
            hidden_ids.add(entity.id)
        else:
            known.append(shown)
        if shown is not entity:
            altered.add(entity.id)
    basis = ScopeBasis(npc_id, names.version, everyone, withheld, hidden_names, frozenset(altered))
    return Scope(tuple(known), frozenset(hidden_ids), redactor, basis)


def patched_scope(
    previous: Scope,
    names: EntityNames,
    changed: frozenset[str],
    corrector: PhoneticCorrector | None,
    windows: CampaignWindows,
) -> Scope:
    """`previous` (an NPC's) brought to `names`, which differs from what it was built from
    by the entities `changed` (`corrector`: the campaign's for `names`).

    Exact because an entity's judgement depends on itself and on the redactor alone:
    visibility on the entity's own row; a name, id or alias being hidden on the hidden forms
    (all of them only through `found_in`); an episode's name on the whole redactor. So
    judged again are the changed entities, and when the forms change, those the windows
    index finds the new forms in (an entity not found cannot newly hold a hidden name) and
    those altered before (whose hidden name may have gone); when the redactor changes at
    all, the episodes. Every other entity is shown as before."""
    basis = previous.basis
    assert basis is not None, "a patch starts from a scope built or patched before"
    by_id = names.by_id
    npc_id = basis.npc_id
    index = windows.cover(names)
    withheld = dict(basis.withheld)
    gone: list[Entity] = []
    came: list[Entity] = []
    for entity_id in changed:
        before = withheld.pop(entity_id, None)
        if before is not None:
            gone.append(before)
        now = by_id.get(entity_id)
        if now is not None and not visible_to(now, npc_id):
            withheld[entity_id] = now
            came.append(now)
    redactor, hidden_names = previous.redactor, basis.hidden_names
    if _spellings(gone) != _spellings(came) or set(withheld) != set(basis.withheld):
        redactor = Redactor(
            redactor.forms.changed(_spellings(gone), _spellings(came)),
            corrector,
            frozenset(withheld),
        )
        hidden_names = hidden_names.changed((e.name for e in gone), (e.name for e in came))
    elif corrector is not redactor.corrector:
        redactor = Redactor(redactor.forms, corrector, redactor.hidden_ids)
    judged = set(changed)
    seen = functools.partial(_as_seen, redactor=redactor, hidden_names=hidden_names)
    forms_changed = (redactor.forms, hidden_names) != (previous.redactor.forms, basis.hidden_names)
    if forms_changed:
        naming = None if index is None else index.naming(hidden_names)
        aliases = None if index is None else index.hidden_aliases(redactor.forms)
        if index is None or naming is None or aliases is None:
            judged |= by_id.keys()
        else:
            judged |= basis.altered | naming | index.owners_of(aliases)
            seen = functools.partial(
                _as_seen_by_windows,
                redactor=redactor,
                hidden_names=hidden_names,
                naming=naming,
                hidden_aliases=aliases,
                unchanged_before=_Unchanged(previous.by_id, changed),
            )
    if redactor is not previous.redactor:
        judged |= windows.episodes
    return _rejudged(previous, names, judged, withheld, redactor, hidden_names, seen)


def _as_seen_by_windows(
    entity: Entity,
    redactor: Redactor,
    hidden_names: HiddenForms,
    naming: set[str],
    hidden_aliases: set[str],
    unchanged_before: Mapping[str, Entity],
) -> Entity | None:
    """`_as_seen`, told by the windows index which names and aliases hold hidden forms
    (exactly those `found_in` finds), so that judging a thousand entities again after a
    secret changes takes a millisecond instead of a tenth of a second."""
    if session_of(entity) is not None:
        return _as_seen(entity, redactor, hidden_names)
    if entity.id in naming:
        return None
    aliases = tuple(a for a in entity.aliases if a not in hidden_aliases)
    if aliases == entity.aliases:
        return entity
    before = unchanged_before.get(entity.id)
    if before is not None and before.aliases == aliases and before.name == entity.name:
        return before  # copying hundreds of entities again would be most of a patch's time
    return entity.model_copy(update={"aliases": aliases})


class _Unchanged(Mapping[str, Entity]):
    """How a scope showed the entities that did not change since (their shown copies can
    be shown again)."""

    def __init__(self, shown: Mapping[str, Entity], changed: frozenset[str]) -> None:
        self._shown = shown
        self._changed = changed

    def __getitem__(self, entity_id: str) -> Entity:
        if entity_id in self._changed:
            raise KeyError(entity_id)
        return self._shown[entity_id]

    def __iter__(self) -> Iterator[str]:
        return (i for i in self._shown if i not in self._changed)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _rejudged(
    previous: Scope,
    names: EntityNames,
    judged: set[str],
    withheld: dict[str, Entity],
    redactor: Redactor,
    hidden_names: HiddenForms,
    seen: Callable[[Entity], Entity | None],
) -> Scope:
    """`previous` with the entities `judged` judged again (`seen`) under the new redactor."""
    basis = previous.basis
    assert basis is not None
    shown_before = previous.by_id
    hidden_ids = set(previous.hidden_ids - judged)
    altered = set(basis.altered - judged)
    now_shown: dict[str, Entity | None] = {}
    everything = redactor is SHOW_EVERYTHING
    for entity_id in judged:
        entity = names.by_id.get(entity_id)
        if entity is None:
            now_shown[entity_id] = None
            continue
        if everything:
            shown: Entity | None = entity
        elif entity_id in withheld:
            shown = None
        else:
            shown = seen(entity)
        if shown is None:
            hidden_ids.add(entity_id)
        now_shown[entity_id] = shown
        if entity_id not in withheld and shown is not entity:
            altered.add(entity_id)
    # Shown as before (the same object, or an equal one): kept, with what was prepared from it.
    differs = {
        entity_id: shown
        for entity_id, shown in now_shown.items()
        if not (shown is shown_before.get(entity_id) or shown == shown_before.get(entity_id))
    }
    known = previous.known if not differs else _replaced(previous.known, differs)
    new_basis = ScopeBasis(
        basis.npc_id, names.version, names.entities, withheld, hidden_names, frozenset(altered)
    )
    scope = Scope(known, frozenset(hidden_ids), redactor, new_basis)
    _carry_derived(previous, scope, differs)
    return scope


def _replaced(
    known: tuple[Entity, ...], differs: Mapping[str, Entity | None]
) -> tuple[Entity, ...]:
    """`known` (in order of id) with the differing entities taken out, and put back as
    they are now shown."""
    shown = [e for e in differs.values() if e is not None]
    return tuple(replaced_by_id(known, differs, shown))


def _carry_derived(previous: Scope, scope: Scope, differs: Mapping[str, Entity | None]) -> None:
    """What `previous` built from its known entities (name index and pattern, groups by
    type, corrector), patched for `scope` instead of built again on first use."""
    built = previous.__dict__
    if not differs:
        for name in _DERIVED:
            if name in built:
                scope.__dict__[name] = built[name]
        return
    if "by_id" in built:
        by_id = dict(built["by_id"])
        for entity_id, entity in differs.items():
            if entity is None:
                by_id.pop(entity_id, None)
            else:
                by_id[entity_id] = entity
        scope.__dict__["by_id"] = by_id
    if "by_type" in built:
        scope.__dict__["by_type"] = _by_type_patched(built["by_type"], previous, differs)
    if "names" in built:
        scope.__dict__["names"] = built["names"].with_changes(differs)
    if "mentions" in built:
        before = previous.by_id
        scope.__dict__["mentions"] = built["mentions"].with_changes(
            [before[i] for i in differs if i in before],
            [e for e in differs.values() if e is not None],
        )
    SHARED_CORRECTORS.derived(previous.known, scope.known, differs)


_DERIVED = ("names", "mentions", "by_id", "by_type")


def _by_type_patched(
    by_type: Mapping[EntityType, tuple[Entity, ...]],
    previous: Scope,
    differs: Mapping[str, Entity | None],
) -> dict[EntityType, tuple[Entity, ...]]:
    patched = dict(by_type)
    before = previous.by_id
    touched = {before[i].type for i in differs if i in before}
    touched |= {e.type for e in differs.values() if e is not None}
    for entity_type in touched:
        kept = [e for e in patched.get(entity_type, ()) if e.id not in differs]
        for entity in differs.values():
            if entity is not None and entity.type is entity_type:
                bisect.insort(kept, entity, key=_alphabetical)
        if kept:
            patched[entity_type] = tuple(kept)
        else:
            patched.pop(entity_type, None)
    return patched


def _alphabetical(entity: Entity) -> tuple[str, str]:
    return (entity.name.lower(), entity.id)


def _by_id(entity: Entity) -> str:
    return entity.id


def _spellings(entities: Iterable[Entity]) -> list[str]:
    return sorted(spelling for entity in entities for spelling in (entity.name, *entity.aliases))


def _as_seen(entity: Entity, redactor: Redactor, hidden_names: HiddenForms) -> Entity | None:
    """The entity as a viewer with this redactor may know it, or None.

    An episode's name is a session title, written at the table: it is shown without the
    title when the title names anything hidden, however. Any other entity was named by the
    DM, who let this viewer know it: it is hidden only when its name or id holds a hidden
    entity's name ("Salt Knives' Cellar"), not when it merely shares a word with a hidden
    alias (a first name two people have). Aliases are dropped by the whole rule."""
    aliases = tuple(a for a in entity.aliases if not redactor.forms.found_in(a))
    name = entity.name
    if session_of(entity) is not None:
        if redactor.mentions_hidden(entity.id):
            return None
        if redactor.mentions_hidden(name):
            name = untitled_name(entity)
    elif hidden_names.found_in(name) or hidden_names.found_in(entity.id):
        return None
    if name == entity.name and aliases == entity.aliases:
        return entity
    return entity.model_copy(update={"name": name, "aliases": aliases})
