"""Structured questions to the knowledge graph, in a viewer's scope: entities by name, by
type, or by their connections to another."""

from __future__ import annotations

from collections.abc import Mapping

from glyphoxa_mcp.concurrency import concurrently
from glyphoxa_mcp.domain.models import Entity, IdentitySnapshot, Neighbour, RelatedEntity
from glyphoxa_mcp.domain.rumours import RumourRule
from glyphoxa_mcp.domain.vocabulary import EntityType, checked_relationship_type
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.names import NameMatch, match_names
from glyphoxa_mcp.recall.relationship_sentences import seen_from
from glyphoxa_mcp.views.arguments import present
from glyphoxa_mcp.views.limits import Clamped
from glyphoxa_mcp.views.reading import Reader, Reading
from glyphoxa_mcp.views.results import (
    CountLimit,
    EntityView,
    QueryEntitiesResult,
    RelationshipView,
)
from glyphoxa_mcp.views.scope import Scope

# A result is read by a model, often a voice one: ten hubs with 25 relationships each were
# 150 KB of JSON (and 40 ms to assemble). The relationships are shared out over the entities
# returned: all 25 for one entity, at least 5 each however many there are.
MAX_RELATIONSHIPS_PER_ENTITY = 25
MIN_RELATIONSHIPS_PER_ENTITY = 5
RELATIONSHIPS_PER_RESULT = 60
# How many graph neighbours to consider before filtering them by type and name (unfiltered,
# only the nearest `limit` are read).
NEIGHBOUR_POOL = 500
# An entity as a viewer is shown it: by viewer, rumour rule, relationships listed, entity id.
ShownKey = tuple[str, str | None, RumourRule, int, str]


class EntityQuery:
    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.queries = reader.memory.queries

    async def run(
        self,
        name: str | None,
        entity_type: EntityType | None,
        related_to: str | None,
        relation: str | None,
        depth: Clamped,
        count: Clamped,
    ) -> QueryEntitiesResult:
        name, related_to = present(name, "name"), present(related_to, "related_to")
        relation = present(relation, "relation")
        if name is None and entity_type is None and related_to is None:
            raise InvalidInputError("Give at least one of name, type or related_to.", field="name")
        if relation is not None and related_to is None:
            raise InvalidInputError("relation needs related_to.", field="relation")
        hops = depth if related_to is not None else None
        result = QueryEntitiesResult(
            entities=[],
            limit=CountLimit.of(count),
            depth=CountLimit.of(hops) if hops is not None else None,
            scope=self.reader.label,
        )
        reading = await self.reader.reading()
        scope = reading.scope
        if related_to is not None:
            anchors = scope.names.match(related_to, limit=1)
            if not anchors:
                return result.model_copy(
                    update={"note": f"No known entity matches related_to={related_to!r}."}
                )
            assert hops is not None
            views = await self._related(
                reading, anchors[0], name, entity_type, relation, hops.used, count.used
            )
        else:
            views = self._by_name_or_type(scope, name, entity_type)
        views = views[: count.used]
        per_entity = relationships_per_entity(len(views))
        entities = await self._with_relationships(views, per_entity, reading)
        note = None if entities else "No entity matched; check the spelling or try a type."
        return result.model_copy(
            update={"entities": entities, "relationships_per_entity": per_entity, "note": note}
        )

    def _by_name_or_type(
        self, scope: Scope, name: str | None, entity_type: EntityType | None
    ) -> list[tuple[Entity, str, Neighbour | None]]:
        if name is None:
            typed = scope.by_type.get(entity_type, ()) if entity_type is not None else ()
            return [(e, "type", None) for e in typed]
        matches = scope.names.match(
            name, limit=50, accept=lambda e: entity_type is None or e.type == entity_type
        )
        return [(m.entity, m.kind, None) for m in matches]

    async def _related(
        self,
        reading: Reading,
        anchor: NameMatch,
        name: str | None,
        entity_type: EntityType | None,
        relation: str | None,
        depth: int,
        wanted: int,
    ) -> list[tuple[Entity, str, Neighbour | None]]:
        rel_types = [checked_relationship_type(relation, "relation")] if relation else None
        scope = reading.scope
        neighbours = await self._walk(
            reading,
            anchor.entity.id,
            depth,
            rel_types,
            NEIGHBOUR_POOL if name is not None or entity_type is not None else wanted,
        )
        kept = [
            n
            for n in scope.shown_neighbours(neighbours)
            if entity_type is None or n.entity.type == entity_type
        ]
        if name is not None:
            named = {m.entity.id for m in match_names(name, [n.entity for n in kept], limit=50)}
            kept = [n for n in kept if n.entity.id in named]
        return [(n.entity, "related", n) for n in kept]

    async def _walk(
        self,
        reading: Reading,
        anchor_id: str,
        depth: int,
        rel_types: list[str] | None,
        limit: int,
    ) -> list[Neighbour]:
        """The entities within `depth` hops of the anchor that this viewer may know, nearest
        first. A walk of two hops from a hub reads thousands of rows (3-4 ms): it is kept
        while nothing the viewer knows changes, as ids and paths (strings and numbers, which
        the collector does not track), and its entities are the scope's."""
        npc_id = self.reader.npc_id

        async def walk() -> tuple[tuple[str, int, tuple[str, ...], str], ...]:
            found = await self.queries.neighbours(
                anchor_id, depth=depth, npc_id=npc_id, rel_types=rel_types, limit=limit
            )
            return tuple((n.entity.id, n.depth, n.path, n.via) for n in found)

        key = ("walk", npc_id, anchor_id, depth, tuple(rel_types or ()), limit)
        steps = await reading.memory.knowledge_parts.get(key, walk, reading.knowledge_version)
        by_id = reading.scope.by_id
        # Built from the cache's own values, checked when they were read.
        return [
            Neighbour.model_construct(entity=by_id[i], depth=d, path=path, via=via)
            for i, d, path, via in steps
            if i in by_id
        ]

    async def _with_relationships(
        self,
        views: list[tuple[Entity, str, Neighbour | None]],
        per_entity: int,
        reading: Reading,
    ) -> list[EntityView]:
        """The entities as this viewer is shown them, with `per_entity` relationships each.
        An entity shown is kept while nothing the viewer knows changes: the same entities are
        asked for at turn after turn of play, and reading one with its relationships and
        shaping it for the viewer was most of a call. It is kept as its JSON text: thousands
        of views kept as models were hundreds of thousands of objects the cyclic collector
        walked at every full collection (150 ms each under load); a text is none, and read
        back in about 30 µs for 25 relationships, a fresh copy for each answer."""
        keys = [self._key(entity.id, per_entity) for entity, _, _ in views]

        async def shown(missing: list[ShownKey]) -> dict[ShownKey, str | None]:
            by_id = await self._shown([key[-1] for key in missing], per_entity, reading)
            return {key: by_id.get(key[-1]) for key in missing}

        kept = await reading.memory.knowledge_parts.get_many(keys, shown, reading.knowledge_version)
        found = []
        for (_, kind, neighbour), key in zip(views, keys, strict=True):
            text = kept[key]
            if text is not None:
                view = EntityView.model_validate_json(text)  # this answer's own copy
                view.match = kind  # type: ignore[assignment]
                view.hops = neighbour.depth if neighbour else None
                view.path = list(neighbour.path) if neighbour else None
                found.append(view)
        return found

    def _key(self, entity_id: str, per_entity: int) -> ShownKey:
        # Everything an entity's view depends on but the campaign's knowledge (the counter).
        return ("entity shown", self.reader.npc_id, self.reader.rumours, per_entity, entity_id)

    async def _shown(
        self, entity_ids: list[str], per_entity: int, reading: Reading
    ) -> dict[str, str]:
        """The entities' views, as JSON text, by id; those the viewer may not know left out."""
        read, withheld = await concurrently(
            lambda: self.queries.snapshots(
                entity_ids,
                npc_id=self.reader.npc_id,
                max_relationships=per_entity,
                include_facts=False,
            ),
            reading.withheld_sessions,
        )
        scope = reading.scope
        snapshots = [scope.shown_snapshot(snapshot, withheld) for snapshot in read]
        return {
            s.entity.id: self._view(s, scope).model_dump_json() for s in snapshots if s is not None
        }

    def _view(self, snapshot: IdentitySnapshot, scope: Scope) -> EntityView:
        """The entity's view; how it matched is the caller's to set."""
        entity = snapshot.entity
        return EntityView(
            id=entity.id,
            name=entity.name,
            type=entity.type.value,
            aliases=list(entity.aliases),
            attributes=scope.redactor.clean(entity.attributes),
            secret=entity.visibility.secret,
            match="exact",
            relationships=[
                self._relationship(entity, r, scope.by_id) for r in snapshot.relationships
            ],
        )

    def _relationship(
        self, entity: Entity, related: RelatedEntity, names: Mapping[str, Entity]
    ) -> RelationshipView:
        rel, other = related.relationship, related.other
        return RelationshipView(
            id=rel.id,
            type=rel.rel_type,
            direction=related.direction,
            other_id=other.id,
            other_name=other.name,
            other_type=other.type.value,
            sentence=seen_from(entity.name, related),
            provenance=self.reader.provenance(rel.provenance, rel.visibility, names),
            secret=rel.visibility.secret,
        )


def relationships_per_entity(entities: int) -> int:
    """How many relationships each of `entities` entities lists."""
    shared = RELATIONSHIPS_PER_RESULT // max(entities, 1)
    return max(MIN_RELATIONSHIPS_PER_ENTITY, min(MAX_RELATIONSHIPS_PER_ENTITY, shared))
