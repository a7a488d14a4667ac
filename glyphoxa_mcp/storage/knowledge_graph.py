"""L3: entities, typed relationships and sourced facts of one campaign (writes and lookups).

Traversal and combined graph + text/vector queries are in `graph_queries`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.models import (
    Entity,
    Fact,
    NewEntity,
    NewFact,
    NewRelationship,
    Provenance,
    Relationship,
    Visibility,
    checked_embedding,
)
from glyphoxa_mcp.domain.vocabulary import (
    BIDIRECTIONAL_TYPES,
    EntityType,
    is_bidirectional,
    slugify,
)
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.names_read_cache import FORGET_CAMPAIGN_NAMES_READ
from glyphoxa_mcp.storage.sql_parts import Params, entity_visible, visible, where

ENTITY_COLUMNS = "e.id, e.type, e.name, e.aliases, e.attributes, e.secret, e.known_by"
RELATIONSHIP_COLUMNS = (
    "r.id, r.source_id, r.target_id, r.rel_type, r.attributes, r.provenance, r.source_entry_id, "
    "r.secret, r.known_by, r.word"
)
FACT_COLUMNS = (
    "f.id, f.subject_id, f.text, f.session_id, f.story_day, f.story_label, f.occurred_at, "
    "f.provenance, f.source_entry_id, f.secret, f.known_by, f.word, f.superseded_by"
)

UPSERT_ENTITY = f"""
INSERT INTO entities AS e (campaign_id, id, type, name, aliases, attributes, secret, known_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (campaign_id, id) DO UPDATE SET
    type = EXCLUDED.type, name = EXCLUDED.name, aliases = EXCLUDED.aliases,
    attributes = EXCLUDED.attributes,
    secret = CASE WHEN $9 THEN e.secret ELSE EXCLUDED.secret END,
    known_by = CASE WHEN $9 THEN e.known_by ELSE EXCLUDED.known_by END,
    updated_at = now()
RETURNING {ENTITY_COLUMNS}
"""
# What the DM decided about a stored item: stated or imported by the DM, or confirmed.
DM_DECIDED = """({alias}.provenance ->> 'source' IN ('dm', 'import')
    OR coalesce(({alias}.provenance ->> 'dm_confirmed')::boolean, false))"""
# The pipeline's reading of an item the DM has not decided replaces a weaker one.
OUTWEIGHS = """NOT {decided}
    AND (EXCLUDED.provenance ->> 'confidence')::numeric
        > ({alias}.provenance ->> 'confidence')::numeric"""
SELECT_ENTITY = f"SELECT {ENTITY_COLUMNS} FROM entities e WHERE e.campaign_id = $1 AND e.id = $2"
DELETE_ENTITY = "DELETE FROM entities WHERE campaign_id = $1 AND id = $2"
# A deleted NPC's id must not linger in anyone's known_by, or a new entity reusing the id
# would inherit its secrets.
FORGET_KNOWER = [
    f"UPDATE {table} SET known_by = array_remove(known_by, $2) "
    "WHERE campaign_id = $1 AND $2 = ANY(known_by)"
    for table in ("entities", "relationships", "facts")
]

UPSERT_RELATIONSHIP = f"""
INSERT INTO relationships AS r
    (campaign_id, source_id, target_id, rel_type, attributes, provenance, secret, known_by,
     source_entry_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (campaign_id, source_id, target_id, rel_type) DO UPDATE SET
    attributes = EXCLUDED.attributes, provenance = EXCLUDED.provenance,
    source_entry_id = EXCLUDED.source_entry_id,
    secret = EXCLUDED.secret, known_by = EXCLUDED.known_by, updated_at = now()
RETURNING {RELATIONSHIP_COLUMNS}
"""
# What the pipeline learned about a relationship: added when new; otherwise it only ever
# strengthens the stored provenance. Who may know it, and the DM's decisions, stay.
PROPOSE_RELATIONSHIP = f"""
INSERT INTO relationships AS r
    (campaign_id, source_id, target_id, rel_type, attributes, provenance, secret, known_by,
     source_entry_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (campaign_id, source_id, target_id, rel_type) DO UPDATE SET
    provenance = EXCLUDED.provenance, source_entry_id = EXCLUDED.source_entry_id,
    updated_at = now()
WHERE {OUTWEIGHS.format(decided=DM_DECIDED.format(alias="r"), alias="r")}
RETURNING {RELATIONSHIP_COLUMNS}
"""
SELECT_RELATIONSHIP_BY_ENDS = f"""
SELECT {RELATIONSHIP_COLUMNS} FROM relationships r
WHERE r.campaign_id = $1 AND r.source_id = $2 AND r.target_id = $3 AND r.rel_type = $4
"""
SELECT_RELATIONSHIP = (
    f"SELECT {RELATIONSHIP_COLUMNS} FROM relationships r WHERE r.campaign_id = $1 AND r.id = $2"
)
DELETE_RELATIONSHIP = """
DELETE FROM relationships
WHERE campaign_id = $1 AND rel_type = $4
  AND ((source_id = $2 AND target_id = $3) OR ($5 AND source_id = $3 AND target_id = $2))
"""

UPSERT_FACT = f"""
INSERT INTO facts AS f
    (campaign_id, subject_id, text, session_id, story_day, story_label, occurred_at,
     provenance, embedding, secret, known_by, source_entry_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (campaign_id, coalesce(subject_id, ''), md5(text)) WHERE superseded_by IS NULL
DO UPDATE SET
    session_id = coalesce(EXCLUDED.session_id, f.session_id),
    story_day = coalesce(EXCLUDED.story_day, f.story_day),
    story_label = coalesce(EXCLUDED.story_label, f.story_label),
    occurred_at = coalesce(EXCLUDED.occurred_at, f.occurred_at),
    provenance = EXCLUDED.provenance, source_entry_id = EXCLUDED.source_entry_id,
    embedding = coalesce(EXCLUDED.embedding, f.embedding),
    secret = EXCLUDED.secret, known_by = EXCLUDED.known_by, updated_at = now()
RETURNING {FACT_COLUMNS}
"""
# The same for a fact, which is also not added again once the DM retconned it away: the
# superseded text stays history.
PROPOSE_FACT = f"""
INSERT INTO facts AS f
    (campaign_id, subject_id, text, session_id, story_day, story_label, occurred_at,
     provenance, embedding, secret, known_by, source_entry_id)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
WHERE NOT EXISTS (
    SELECT 1 FROM facts old
    WHERE old.campaign_id = $1 AND coalesce(old.subject_id, '') = coalesce($2, '')
      AND md5(old.text) = md5($3) AND old.superseded_by IS NOT NULL)
ON CONFLICT (campaign_id, coalesce(subject_id, ''), md5(text)) WHERE superseded_by IS NULL
DO UPDATE SET
    provenance = EXCLUDED.provenance, source_entry_id = EXCLUDED.source_entry_id,
    updated_at = now()
WHERE {OUTWEIGHS.format(decided=DM_DECIDED.format(alias="f"), alias="f")}
RETURNING {FACT_COLUMNS}
"""
SELECT_CURRENT_FACT = f"""
SELECT {FACT_COLUMNS} FROM facts f
WHERE f.campaign_id = $1 AND coalesce(f.subject_id, '') = coalesce($2, '')
  AND md5(f.text) = md5($3) AND f.superseded_by IS NULL
"""
SELECT_FACT = f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.campaign_id = $1 AND f.id = $2"
DELETE_FACT = "DELETE FROM facts WHERE campaign_id = $1 AND id = $2"


# The same rows as JSON shaped like the models, for statements that nest them: pydantic
# validates the JSON text in one call, several times faster than dicts decoded in Python.
def _visibility_json(alias: str) -> str:
    return f"json_build_object('secret', {alias}.secret, 'known_by', {alias}.known_by)"


def _provenance_json(alias: str) -> str:
    return f"{alias}.provenance || jsonb_build_object('entry_id', {alias}.source_entry_id)"


def entity_json(alias: str) -> str:
    """An `Entity` as JSON, from the entities row at `alias`."""
    return (
        f"json_build_object('id', {alias}.id, 'type', {alias}.type, 'name', {alias}.name, "
        f"'aliases', {alias}.aliases, 'attributes', {alias}.attributes, "
        f"'visibility', {_visibility_json(alias)})"
    )


def relationship_json(alias: str) -> str:
    """A `Relationship` as JSON, from the relationships row at `alias`."""
    return (
        f"json_build_object('id', {alias}.id, 'source_id', {alias}.source_id, "
        f"'target_id', {alias}.target_id, 'rel_type', {alias}.rel_type, "
        f"'attributes', {alias}.attributes, 'provenance', {_provenance_json(alias)}, "
        f"'visibility', {_visibility_json(alias)})"
    )


def fact_json(alias: str) -> str:
    """A `Fact` as JSON, from the facts row at `alias`."""
    return (
        f"json_build_object('id', {alias}.id, 'subject_id', {alias}.subject_id, "
        f"'text', {alias}.text, 'session_id', {alias}.session_id, "
        f"'story_day', {alias}.story_day, 'story_label', {alias}.story_label, "
        f"'occurred_at', {alias}.occurred_at, 'provenance', {_provenance_json(alias)}, "
        f"'visibility', {_visibility_json(alias)}, 'superseded_by', {alias}.superseded_by)"
    )


def entity_from_row(row: asyncpg.Record | dict[str, Any]) -> Entity:
    return Entity(
        id=row["id"],
        type=row["type"],
        name=row["name"],
        aliases=tuple(row["aliases"]),
        attributes=row["attributes"],
        visibility=Visibility(secret=row["secret"], known_by=tuple(row["known_by"])),
    )


def relationship_from_row(row: asyncpg.Record | dict[str, Any]) -> Relationship:
    return Relationship(
        id=row["id"],
        source_id=row["source_id"],
        target_id=row["target_id"],
        rel_type=row["rel_type"],
        attributes=row["attributes"],
        provenance=_provenance(row),
        visibility=_visibility(row),
    )


def fact_from_row(row: asyncpg.Record | dict[str, Any]) -> Fact:
    story_day = row["story_day"]
    return Fact(
        id=row["id"],
        subject_id=row["subject_id"],
        text=row["text"],
        session_id=row["session_id"],
        story_day=float(story_day) if story_day is not None else None,
        story_label=row["story_label"],
        occurred_at=row["occurred_at"],
        provenance=_provenance(row),
        visibility=_visibility(row),
        superseded_by=row["superseded_by"],
    )


def _visibility(row: asyncpg.Record | dict[str, Any]) -> Visibility:
    word = row.get("word") or {}
    return Visibility(
        secret=row["secret"],
        known_by=tuple(row["known_by"]),
        hearsay=tuple(sorted(word.items())),
    )


def _provenance(row: asyncpg.Record | dict[str, Any]) -> Provenance:
    return Provenance.model_validate({**row["provenance"], "entry_id": row["source_entry_id"]})


def _provenance_to_store(provenance: Provenance) -> dict[str, Any]:
    """The provenance as stored in its JSON column: the cited line has a column of its own."""
    return provenance.model_dump(mode="json", exclude={"entry_id"})


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


SELECT_PEOPLE = """
SELECT id, type, name, aliases FROM entities
WHERE campaign_id = $1 AND type IN ('npc', 'player')
"""


@dataclass(frozen=True)
class Person:
    id: str
    type: EntityType
    names: tuple[str, ...]


class KnowledgeGraph:
    """Entities, relationships and facts of one campaign."""

    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.dimension = db.embedding_dim
        self.campaign_id = campaign_id

    # --- entities ------------------------------------------------------------------------------

    async def people(self) -> list[Person]:
        """The campaign's NPCs and players, each by its id, type and the names it goes by
        (name, aliases, id): what a transcript's speakers are matched against, read without
        the rest of every entity."""
        with driver_errors("read the campaign's people"):
            rows = await self._pool.fetch(SELECT_PEOPLE, self.campaign_id)
        return [
            Person(row["id"], EntityType(row["type"]), (row["name"], *row["aliases"], row["id"]))
            for row in rows
        ]

    async def upsert_entity(self, entity: NewEntity, *, keep_visibility: bool = False) -> Entity:
        """Create the entity, or replace the stored one with the same id (with
        `keep_visibility`, all but who may know it: what the pipeline refreshes)."""
        entity_id = entity.id or slugify(entity.name)
        with driver_errors(f"store entity {entity.name!r}"):
            row = await self._pool.fetchrow(
                UPSERT_ENTITY,
                self.campaign_id,
                entity_id,
                entity.type.value,
                entity.name,
                list(entity.aliases),
                entity.attributes,
                entity.visibility.secret,
                list(entity.visibility.known_by),
                keep_visibility,
            )
        return entity_from_row(row)

    async def get_entity(self, entity_id: str) -> Entity:
        with driver_errors(f"read entity {entity_id!r}"):
            row = await self._pool.fetchrow(SELECT_ENTITY, self.campaign_id, entity_id)
        if row is None:
            raise NotFoundError(
                f"No entity {entity_id!r} in campaign {self.campaign_id!r}. "
                "Search by name to find its id."
            )
        return entity_from_row(row)

    async def find_entities(
        self,
        *,
        name: str | None = None,
        type: EntityType | None = None,
        npc_id: str | None = None,
        limit: int = 50,
    ) -> list[Entity]:
        """Entities by name or alias (case-insensitive; exact matches before partial ones)
        and/or type, within the NPC's scope (`npc_id=None` is the DM's)."""
        if name is not None and not name.strip():
            raise InvalidInputError("The name to find is blank.", field="name")
        if limit < 1:
            raise InvalidInputError(f"limit must be at least 1; got {limit}.", field="limit")
        params = Params(self.campaign_id)
        npc = params.add(npc_id)
        conditions = ["e.campaign_id = $1", entity_visible("e", npc)]
        order = "e.name, e.id"
        if type is not None:
            conditions.append(f"e.type = {params.add(EntityType(type).value)}")
        if name is not None:
            wanted = params.add(name.strip().lower())
            pattern = params.add(f"%{_escape_like(name.strip().lower())}%")
            exact = (
                f"(lower(e.name) = {wanted} OR EXISTS "
                f"(SELECT 1 FROM unnest(e.aliases) a WHERE lower(a) = {wanted}))"
            )
            conditions.append(
                f"({exact} OR lower(e.name) LIKE {pattern} OR EXISTS "
                f"(SELECT 1 FROM unnest(e.aliases) a WHERE lower(a) LIKE {pattern}))"
            )
            order = f"{exact} DESC, length(e.name), {order}"
        sql = f"""
            SELECT {ENTITY_COLUMNS} FROM entities e WHERE {where(conditions)}
            ORDER BY {order} LIMIT {params.add(limit)}
        """
        with driver_errors("find entities"):
            rows = await self._pool.fetch(sql, *params.values)
        return [entity_from_row(row) for row in rows]

    async def find_by_attribute(
        self,
        type: EntityType,
        attribute: str,
        one_of: Sequence[str],
        *,
        npc_id: str | None = None,
        limit: int = 50,
    ) -> list[Entity]:
        """Entities of `type` whose `attribute` is one of `one_of` (case-insensitive), by
        name, within the NPC's scope: the active quests among a campaign's hundreds."""
        sql = f"""
            SELECT {ENTITY_COLUMNS} FROM entities e
            WHERE e.campaign_id = $1 AND e.type = $2
              AND lower(e.attributes ->> $3) = ANY($4::text[]) AND {entity_visible("e", "$5")}
            ORDER BY e.name, e.id LIMIT $6
        """
        wanted = [value.lower() for value in one_of]
        with driver_errors(f"find {type.value} entities by {attribute}"):
            rows = await self._pool.fetch(
                sql, self.campaign_id, type.value, attribute, wanted, npc_id, limit
            )
        return [entity_from_row(row) for row in rows]

    async def delete_entity(self, entity_id: str) -> bool:
        """Delete an entity with its relationships and facts; False when there was none."""
        with driver_errors(f"delete entity {entity_id!r}"):
            async with self._pool.acquire() as conn, conn.transaction():
                status: str = await conn.execute(DELETE_ENTITY, self.campaign_id, entity_id)
                for statement in FORGET_KNOWER:
                    await conn.execute(statement, self.campaign_id, entity_id)
        return status.endswith(" 1")

    # --- relationships -------------------------------------------------------------------------

    async def upsert_relationship(self, relationship: NewRelationship) -> Relationship:
        """Create or update a relationship; a bidirectional type is stored in both directions.

        Returns the relationship in the direction given.
        """
        return await self._store_relationship(UPSERT_RELATIONSHIP, relationship)

    async def propose_relationship(self, relationship: NewRelationship) -> Relationship:
        """What the pipeline (extraction, an episode) learned: stored when new; otherwise only
        a more confident reading replaces the stored provenance, and never one the DM stated,
        imported or confirmed. Who may know it stays as the DM set it."""
        return await self._store_relationship(PROPOSE_RELATIONSHIP, relationship)

    async def _store_relationship(
        self, statement: str, relationship: NewRelationship
    ) -> Relationship:
        if relationship.source_id == relationship.target_id:
            raise InvalidInputError(
                f"An entity cannot have a relationship with itself ({relationship.source_id!r}).",
                field="target_id",
            )
        directions = [(relationship.source_id, relationship.target_id)]
        if is_bidirectional(relationship.rel_type):
            directions.append((relationship.target_id, relationship.source_id))
        action = (
            f"relate {relationship.source_id!r} {relationship.rel_type} {relationship.target_id!r}"
        )
        rows = []
        with driver_errors(action):
            async with self._pool.acquire() as conn, conn.transaction():
                for source, target in directions:
                    ends = (self.campaign_id, source, target, relationship.rel_type)
                    row = await conn.fetchrow(
                        statement,
                        *ends,
                        relationship.attributes,
                        _provenance_to_store(relationship.provenance),
                        relationship.visibility.secret,
                        list(relationship.visibility.known_by),
                        relationship.provenance.entry_id,
                    )
                    # A proposal that changes nothing returns no row: read the stored one.
                    rows.append(row or await conn.fetchrow(SELECT_RELATIONSHIP_BY_ENDS, *ends))
        return relationship_from_row(rows[0])

    async def get_relationship(self, relationship_id: int) -> Relationship:
        with driver_errors(f"read relationship {relationship_id}"):
            row = await self._pool.fetchrow(SELECT_RELATIONSHIP, self.campaign_id, relationship_id)
        if row is None:
            raise NotFoundError(
                f"No relationship {relationship_id} in campaign {self.campaign_id!r}."
            )
        return relationship_from_row(row)

    async def relationships_of(
        self,
        entity_id: str,
        *,
        direction: Literal["outgoing", "incoming", "both"] = "both",
        rel_type: str | None = None,
        npc_id: str | None = None,
    ) -> list[Relationship]:
        """Relationships touching an entity that the NPC may know, both of whose ends it may
        know too. A bidirectional pair is reported once, in its outgoing direction."""
        params = Params(self.campaign_id, entity_id)
        npc = params.add(npc_id)
        if direction == "outgoing":
            touching = "r.source_id = $2"
        elif direction == "incoming":
            touching = "r.target_id = $2"
        else:
            bidirectional = params.add(list(BIDIRECTIONAL_TYPES))
            touching = (
                f"(r.source_id = $2 OR (r.target_id = $2 "
                f"AND NOT r.rel_type = ANY({bidirectional}::text[])))"
            )
        conditions = [
            "r.campaign_id = $1",
            touching,
            visible("r", npc),
            entity_visible("s", npc),
            entity_visible("t", npc),
        ]
        if rel_type is not None:
            conditions.append(f"r.rel_type = {params.add(rel_type)}")
        sql = f"""
            SELECT {RELATIONSHIP_COLUMNS} FROM relationships r
            JOIN entities s ON s.campaign_id = r.campaign_id AND s.id = r.source_id
            JOIN entities t ON t.campaign_id = r.campaign_id AND t.id = r.target_id
            WHERE {where(conditions)}
            ORDER BY r.rel_type, r.source_id, r.target_id
        """
        with driver_errors(f"read the relationships of {entity_id!r}"):
            rows = await self._pool.fetch(sql, *params.values)
        return [relationship_from_row(row) for row in rows]

    async def delete_relationship(self, source_id: str, rel_type: str, target_id: str) -> bool:
        """Delete a relationship (both directions of a bidirectional one)."""
        with driver_errors(f"delete relationship {source_id!r} {rel_type} {target_id!r}"):
            status = await self._pool.execute(
                DELETE_RELATIONSHIP,
                self.campaign_id,
                source_id,
                target_id,
                rel_type,
                is_bidirectional(rel_type),
            )
        return not status.endswith(" 0")

    # --- facts ---------------------------------------------------------------------------------

    async def upsert_fact(self, fact: NewFact) -> Fact:
        """Store a fact; the same text about the same subject updates the stored fact."""
        stored = await self._store_fact(UPSERT_FACT, fact)
        assert stored is not None, "an upsert always returns its row"
        return stored

    async def propose_fact(self, fact: NewFact) -> Fact | None:
        """What the pipeline learned: stored when new, strengthened as for relationships,
        and None when the DM retconned this statement away (it stays history)."""
        return await self._store_fact(PROPOSE_FACT, fact)

    async def _store_fact(self, statement: str, fact: NewFact) -> Fact | None:
        embedding = (
            checked_embedding(fact.embedding, self.dimension)
            if fact.embedding is not None
            else None
        )
        with driver_errors("store a fact"):
            async with self._pool.acquire() as conn, conn.transaction():
                row = await conn.fetchrow(
                    statement,
                    self.campaign_id,
                    fact.subject_id,
                    fact.text,
                    fact.session_id,
                    fact.story_day,
                    fact.story_label,
                    fact.occurred_at,
                    _provenance_to_store(fact.provenance),
                    embedding,
                    fact.visibility.secret,
                    list(fact.visibility.known_by),
                    fact.provenance.entry_id,
                )
                if row is None:  # unchanged, or retconned away
                    row = await conn.fetchrow(
                        SELECT_CURRENT_FACT, self.campaign_id, fact.subject_id, fact.text
                    )
        return fact_from_row(row) if row is not None else None

    async def get_fact(self, fact_id: int) -> Fact:
        with driver_errors(f"read fact {fact_id}"):
            row = await self._pool.fetchrow(SELECT_FACT, self.campaign_id, fact_id)
        if row is None:
            raise NotFoundError(f"No fact {fact_id} in campaign {self.campaign_id!r}.")
        return fact_from_row(row)

    async def facts_about(
        self, subject_id: str, *, npc_id: str | None = None, include_history: bool = False
    ) -> list[Fact]:
        """Current facts about an entity within the NPC's scope, oldest first."""
        params = Params(self.campaign_id, subject_id)
        conditions = ["f.campaign_id = $1", "f.subject_id = $2", visible("f", params.add(npc_id))]
        if not include_history:
            conditions.append("f.superseded_by IS NULL")
        sql = f"SELECT {FACT_COLUMNS} FROM facts f WHERE {where(conditions)} ORDER BY f.id"
        with driver_errors(f"read the facts about {subject_id!r}"):
            rows = await self._pool.fetch(sql, *params.values)
        return [fact_from_row(row) for row in rows]

    async def delete_fact(self, fact_id: int) -> bool:
        """Delete the fact, and with it what name correction read in the campaign's texts
        (a digest of its text with the entities it named would outlive it)."""
        with driver_errors(f"delete fact {fact_id}"):
            async with self._pool.acquire() as conn, conn.transaction():
                status: str = await conn.execute(DELETE_FACT, self.campaign_id, fact_id)
                deleted = status.endswith(" 1")
                if deleted:
                    await conn.execute(FORGET_CAMPAIGN_NAMES_READ, self.campaign_id)
        return deleted

    async def all_relationships(self) -> list[Relationship]:
        with driver_errors("read relationships"):
            rows = await self._pool.fetch(
                f"SELECT {RELATIONSHIP_COLUMNS} FROM relationships r WHERE r.campaign_id = $1 "
                "ORDER BY r.id",
                self.campaign_id,
            )
        return [relationship_from_row(row) for row in rows]

    async def current_facts(self) -> list[Fact]:
        with driver_errors("read facts"):
            rows = await self._pool.fetch(
                f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.campaign_id = $1 "
                "AND f.superseded_by IS NULL ORDER BY f.id",
                self.campaign_id,
            )
        return [fact_from_row(row) for row in rows]
