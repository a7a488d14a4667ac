"""A viewer's scope: the entities it may know, the ids it may not, and the redactor that
keeps hidden names out of the free text it reads."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.recall.names import NameIndex
from glyphoxa_mcp.recall.redaction import SHOW_EVERYTHING, Redactor
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import Entity
from glyphoxa_mcp.storage.vocabulary import EntityType


@dataclass(frozen=True)
class Scope:
    """One NPC's knowledge (None: the DM's): the entities it may know, the ids it may not,
    and a redactor for the hidden names in free text.

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
    return Scope(
        tuple(e for e in everyone if e.id in visible),
        frozenset(entity.id for entity in hidden),
        Redactor.hiding(s for entity in hidden for s in (entity.name, *entity.aliases)),
    )
