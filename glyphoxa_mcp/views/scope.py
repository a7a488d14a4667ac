"""A viewer's scope: the entities it may know (as it may know them), the ids it may not, and
the redactor that keeps what is hidden out of the free text it reads.

Names are text too. An entity whose name holds the name of an entity hidden from the viewer
is hidden from it as well, except an episode (a session remembered in the graph): the
viewer knows that session happened, so it is shown by its date ("the session of
2026-03-21") instead of a title that would tell the secret. Aliases that name something
hidden are dropped.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS
from glyphoxa_mcp.recall.episodes import session_of, untitled_name
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.recall.names import NameIndex
from glyphoxa_mcp.recall.redaction import SHOW_EVERYTHING, HiddenForms, Redactor
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import Entity, IdentitySnapshot, Neighbour
from glyphoxa_mcp.storage.vocabulary import EntityType


@dataclass(frozen=True)
class Scope:
    """One NPC's knowledge (None: the DM's): the entities it may know, as it may know them,
    the ids it may not, and a redactor for the hidden names in free text.

    Scopes are cached until an entity changes (see `scope_of`), so what is built from
    `known` for matching is built on first use and kept with it."""

    known: tuple[Entity, ...]
    hidden_ids: frozenset[str]
    redactor: Redactor

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
            if other is not None and item.relationship.provenance.session_id not in (
                withheld_sessions
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

    def shown_neighbours(self, neighbours: Iterable[Neighbour]) -> list[Neighbour]:
        """Neighbours the viewer may know, reached through entities it may know."""
        kept = []
        for neighbour in neighbours:
            entity = self.shown(neighbour.entity)
            if entity is None or any(step in self.hidden_ids for step in neighbour.path):
                continue
            kept.append(neighbour.model_copy(update={"entity": entity}))
        return kept


async def scope_of(memory: CampaignMemory, npc_id: str | None) -> Scope:
    """The scope of `npc_id` (None: the DM), computed once per version of the campaign's
    entities: loading 10,000 entities and compiling their names takes far longer than a
    tool call may."""
    return await memory.entity_cache.get(("scope", npc_id), lambda: _scope(memory, npc_id))


async def _scope(memory: CampaignMemory, npc_id: str | None) -> Scope:
    everyone = await memory.known_entities()
    if npc_id is None:
        return Scope(tuple(everyone), frozenset(), SHOW_EVERYTHING)
    # Which entities the NPC may know is decided in SQL, as everywhere else.
    visible = set(await memory.queries.visible_entity_ids(npc_id))
    hidden = [e for e in everyone if e.id not in visible]
    redactor = Redactor.hiding(
        (spelling for entity in hidden for spelling in (entity.name, *entity.aliases)),
        # The campaign's corrector: a misspelling is hidden when correction would put it
        # back to a hidden name, not when it merely sounds like one.
        SHARED_CORRECTORS.for_entities(everyone),
        (entity.id for entity in hidden),
    )
    hidden_names = HiddenForms.of(entity.name for entity in hidden)
    known = []
    hidden_ids = {entity.id for entity in hidden}
    for entity in everyone:
        if entity.id in hidden_ids:
            continue
        shown = _as_seen(entity, redactor, hidden_names)
        if shown is None:
            hidden_ids.add(entity.id)
        else:
            known.append(shown)
    return Scope(tuple(known), frozenset(hidden_ids), redactor)


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
