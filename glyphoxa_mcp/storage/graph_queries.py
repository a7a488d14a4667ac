"""L3 reads that walk the graph: traversal, an NPC's visible subgraph, its identity snapshot,
and GraphRAG queries that rank L2 chunks or facts found through a graph neighbourhood, each
in one SQL statement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.entity_names import EntityChanges
from glyphoxa_mcp.domain.episodes import EPISODE_PREFIX
from glyphoxa_mcp.domain.models import (
    NO_FILTERS,
    ChunkInContext,
    ChunkMatch,
    Entity,
    EntityLabel,
    FactMatch,
    IdentitySnapshot,
    Neighbour,
    SearchFilters,
    Subgraph,
    checked_embedding,
    checked_query,
)
from glyphoxa_mcp.domain.vocabulary import BIDIRECTIONAL_TYPES
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.knowledge_graph import (
    ENTITY_COLUMNS,
    FACT_COLUMNS,
    RELATIONSHIP_COLUMNS,
    entity_from_row,
    entity_json,
    fact_from_row,
    fact_json,
    relationship_from_row,
    relationship_json,
)
from glyphoxa_mcp.storage.semantic_index import CHUNK_COLUMNS, chunk_from_row
from glyphoxa_mcp.storage.sql_parts import (
    Params,
    chunk_conditions,
    entity_visible,
    may_read,
    or_tsquery,
    visible,
    where,
)

MAX_DEPTH = 5
# Links that say nothing of who an entity is: left out of its identity (the hot context).
NOT_IDENTITY = ("MENTIONED_IN",)
# What `entity_names` reads of an entity (alias `e`): its names, and for an episode what names
# it without its title (session and date), with who may know it.
NAME_COLUMNS = f"""
    e.id, e.type, e.name, e.aliases,
    CASE WHEN e.type = 'event' AND e.id LIKE '{EPISODE_PREFIX}%'
         THEN jsonb_strip_nulls(jsonb_build_object(
             'session_id', e.attributes -> 'session_id',
             'date', e.attributes -> 'date'))
         ELSE '{{}}'::jsonb END AS attributes,
    e.secret, e.known_by
"""
Direction = Literal["outgoing", "both"]


def walk_cte(
    params: Params,
    *,
    anchors: Sequence[str],
    depth: int,
    npc_id: str | None,
    direction: Direction = "both",
    rel_types: Sequence[str] | None = None,
    enough: str | None = None,
) -> str:
    """CTEs ending in `walk(id, depth, path, via)`: the anchors (depth 0) and every entity
    within `depth` hops, once, at its least depth, with the least (in array order) of its
    shortest paths.

    Scoped: it only crosses relationships and entities the NPC may know, so a secret link
    can't be inferred from what it reaches. It goes one depth at a time from the entities
    first reached at the one before, so a hub's neighbourhood costs its edges, not every path
    through it (a path-by-path walk from a hub with 800 links found 20,000 paths at depth 2).
    With `enough` (a placeholder for a count), a depth is not explored once the depths before
    it found that many entities: for callers that want the nearest `enough`.
    """
    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidInputError(f"depth must be 1 to {MAX_DEPTH}; got {depth}.", field="depth")
    npc = params.add(npc_id)
    start = params.add(list(anchors))
    type_filter = (
        f"AND r.rel_type = ANY({params.add(list(rel_types))}::text[])" if rel_types else ""
    )
    incoming = ""
    if direction == "both":
        # A bidirectional pair is stored both ways; its outgoing row already covers the hop.
        incoming = f"""
                UNION ALL
                SELECT r.source_id, r.rel_type FROM relationships r
                WHERE r.campaign_id = $1 AND r.target_id = w.id AND {visible("r", npc)}
                  {type_filter}
                  AND NOT r.rel_type = ANY({params.add(list(BIDIRECTIONAL_TYPES))}::text[])"""
    levels = [
        f"""
        walk_0 AS (
            SELECT a.id, ARRAY[a.id] AS path, NULL::text AS via
            FROM entities a
            WHERE a.campaign_id = $1 AND a.id = ANY({start}::text[]) AND {entity_visible("a", npc)}
        )"""
    ]
    for level in range(1, depth + 1):
        seen = " ".join(
            f"AND NOT EXISTS (SELECT 1 FROM walk_{before} x WHERE x.id = step.next_id)"
            for before in range(level)
        )
        found = " + ".join(f"(SELECT count(*) FROM walk_{before})" for before in range(1, level))
        gate = f"AND {found} < {enough}" if enough is not None and level > 1 else ""
        levels.append(
            f"""
        walk_{level} AS (
            SELECT DISTINCT ON (step.next_id)
                step.next_id AS id, w.path || step.next_id AS path, step.rel_type AS via
            FROM walk_{level - 1} w
            CROSS JOIN LATERAL (
                SELECT r.target_id AS next_id, r.rel_type FROM relationships r
                WHERE r.campaign_id = $1 AND r.source_id = w.id
                  AND {visible("r", npc)} {type_filter}
                {incoming}
            ) step
            JOIN entities n ON n.campaign_id = $1 AND n.id = step.next_id
            WHERE {entity_visible("n", npc)} {seen} {gate}
            ORDER BY step.next_id, w.path || step.next_id
        )"""
        )
    union = " UNION ALL ".join(
        f"SELECT id, {level}, path, via FROM walk_{level}" for level in range(depth + 1)
    )
    return ",".join(levels) + f",\n        walk (id, depth, path, via) AS ({union})"


# The entities of a session, as an array of ids, so that they are fetched by key: the planner
# cannot know that a session involves dozens of entities, not thousands. One statement for
# the DM and one for an NPC, not one for both with branches switched off by whether $3 is
# NULL: a statement with such branches is planned anew at every call (its generic plan
# looks dearer), which took as long as running it.
_SESSION_ENTITIES = """
    WITH involved AS ({involved})
    SELECT e.id, e.type, e.name FROM entities e
    WHERE e.campaign_id = $1 AND e.id = ANY(ARRAY(SELECT id FROM involved)){known}
    ORDER BY e.type, e.name, e.id
"""
# The DM: every passage's tags, tallied when the session was processed (sql/011), and
# everything else.
SESSION_ENTITIES_FOR_THE_DM = _SESSION_ENTITIES.format(
    involved="""
        SELECT entity_id AS id FROM session_chunk_entities
        WHERE campaign_id = $1 AND session_id = $2
        UNION SELECT npc_id FROM session_entries
        WHERE campaign_id = $1 AND session_id = $2 AND npc_id IS NOT NULL
        UNION SELECT subject_id FROM facts
        WHERE campaign_id = $1 AND session_id = $2 AND subject_id IS NOT NULL
        UNION SELECT unnest(ARRAY[source_id, target_id]) FROM relationships
        WHERE campaign_id = $1 AND provenance ->> 'session_id' = $2""",
    known="",
)
# An NPC ($3): the tags of the passages and the speakers of the lines it may read, the facts
# and relationships it may know, and of those entities the ones it may know.
SESSION_ENTITIES_FOR_AN_NPC = _SESSION_ENTITIES.format(
    involved=f"""
        SELECT unnest(c.entity_ids) AS id FROM chunks c
        WHERE c.campaign_id = $1 AND c.session_id = $2 AND {may_read("c", "$3")}
        UNION SELECT npc_id FROM session_entries e
        WHERE campaign_id = $1 AND session_id = $2 AND npc_id IS NOT NULL
          AND {may_read("e", "$3")}
        UNION SELECT subject_id FROM facts f
        WHERE campaign_id = $1 AND session_id = $2 AND subject_id IS NOT NULL
          AND {visible("f", "$3")}
        UNION SELECT unnest(ARRAY[source_id, target_id]) FROM relationships r
        WHERE campaign_id = $1 AND provenance ->> 'session_id' = $2 AND {visible("r", "$3")}""",
    known=f" AND {entity_visible('e', '$3')}",
)


class GraphQueries:
    """Reads across the graph of one campaign, always within an NPC's scope (None: the DM)."""

    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.dimension = db.embedding_dim
        self.campaign_id = campaign_id

    async def neighbours(
        self,
        entity_id: str,
        *,
        depth: int = 1,
        npc_id: str | None = None,
        direction: Direction = "both",
        rel_types: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[Neighbour]:
        """Entities within `depth` hops, nearest first, each once with its shortest path."""
        params = Params(self.campaign_id)
        wanted = params.add(limit)
        walk = walk_cte(
            params,
            anchors=[entity_id],
            depth=depth,
            npc_id=npc_id,
            direction=direction,
            rel_types=rel_types,
            enough=wanted,
        )
        sql = f"""
            WITH RECURSIVE {walk}
            SELECT {ENTITY_COLUMNS}, n.depth, n.path, n.via
            FROM walk n JOIN entities e ON e.campaign_id = $1 AND e.id = n.id
            WHERE n.depth > 0
            ORDER BY n.depth, e.name, e.id
            LIMIT {wanted}
        """
        with driver_errors(f"walk the graph from {entity_id!r}"):
            rows = await self._pool.fetch(sql, *params.values)
        return [
            Neighbour(
                entity=entity_from_row(row),
                depth=row["depth"],
                path=tuple(row["path"]),
                via=row["via"],
            )
            for row in rows
        ]

    async def visible_subgraph(self, npc_id: str) -> Subgraph:
        """Everything in the graph the NPC may know: entities, the relationships between them,
        and the current facts about them."""
        entities_sql = f"""
            SELECT {ENTITY_COLUMNS} FROM entities e
            WHERE e.campaign_id = $1 AND {entity_visible("e", "$2")} ORDER BY e.id
        """
        relationships_sql = f"""
            SELECT {RELATIONSHIP_COLUMNS} FROM relationships r
            JOIN entities s ON s.campaign_id = r.campaign_id AND s.id = r.source_id
            JOIN entities t ON t.campaign_id = r.campaign_id AND t.id = r.target_id
            WHERE r.campaign_id = $1 AND {visible("r", "$2")}
              AND {entity_visible("s", "$2")} AND {entity_visible("t", "$2")}
            ORDER BY r.id
        """
        facts_sql = f"""
            SELECT {FACT_COLUMNS} FROM facts f
            LEFT JOIN entities s ON s.campaign_id = f.campaign_id AND s.id = f.subject_id
            WHERE f.campaign_id = $1 AND f.superseded_by IS NULL AND {visible("f", "$2")}
              AND (f.subject_id IS NULL OR {entity_visible("s", "$2")})
            ORDER BY f.id
        """
        with driver_errors(f"read what {npc_id!r} may know"):
            async with self._pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
                entities = await conn.fetch(entities_sql, self.campaign_id, npc_id)
                relationships = await conn.fetch(relationships_sql, self.campaign_id, npc_id)
                facts = await conn.fetch(facts_sql, self.campaign_id, npc_id)
        return Subgraph(
            entities=tuple(entity_from_row(row) for row in entities),
            relationships=tuple(relationship_from_row(row) for row in relationships),
            facts=tuple(fact_from_row(row) for row in facts),
        )

    async def identity_snapshot(
        self,
        entity_id: str,
        *,
        npc_id: str | None = None,
        max_relationships: int = 100,
        leaving_out: Sequence[str] = (),
    ) -> IdentitySnapshot:
        """An entity with its relationships (but those of the types `leaving_out`) and
        current facts.

        For an NPC's own prompt pass `npc_id=entity_id`: the snapshot then holds only what the
        NPC itself may know.
        """
        found = await self.snapshots(
            [entity_id],
            npc_id=npc_id,
            max_relationships=max_relationships,
            leaving_out=leaving_out,
        )
        if not found:
            raise NotFoundError(f"No entity {entity_id!r} in campaign {self.campaign_id!r}.")
        return found[0]

    async def snapshots(
        self,
        entity_ids: Sequence[str],
        *,
        npc_id: str | None = None,
        max_relationships: int = 100,
        include_facts: bool = True,
        leaving_out: Sequence[str] = (),
    ) -> list[IdentitySnapshot]:
        """Entities with their relationships (but those of the types `leaving_out`, and
        current facts), in the order asked, in one statement; entities the NPC may not know
        are left out."""
        params = Params(self.campaign_id, list(entity_ids))
        npc = params.add(npc_id)
        skipped = params.add(list(leaving_out))
        other_id = "CASE WHEN r.source_id = e.id THEN r.target_id ELSE r.source_id END"
        bidirectional = params.add(list(BIDIRECTIONAL_TYPES))
        facts = "'[]'::json"
        if include_facts:
            facts = f"""coalesce((
                    SELECT json_agg({fact_json("f")} ORDER BY f.id)
                    FROM facts f
                    WHERE f.campaign_id = $1 AND f.subject_id = e.id
                      AND f.superseded_by IS NULL AND {visible("f", npc)}
                ), '[]'::json)"""
        # A hub has hundreds of relationships, of which `max_relationships` are kept: the
        # first by type and the other end's id (ids are slugs of names), an order known
        # before the other end is read, so that only the kept ones are looked up and turned
        # into JSON. Ordered by the other end's name, every one was (50 ms for ten hubs).
        sql = f"""
            SELECT json_build_object('entity', {entity_json("e")}, 'relationships', coalesce((
                    SELECT json_agg(
                        json_build_object(
                            'direction', CASE WHEN (top.r).source_id = e.id
                                         THEN 'outgoing' ELSE 'incoming' END,
                            'relationship', {relationship_json("(top.r)")},
                            'other', {entity_json("(top.o)")}
                        )
                        ORDER BY (top.r).rel_type, (top.o).name, (top.o).id, (top.r).id
                    )
                    FROM (
                        SELECT ranked.r, o FROM (
                            SELECT r, r.rel_type, {other_id} AS other_id, r.id
                            FROM relationships r
                            WHERE r.campaign_id = $1
                              AND (r.source_id = e.id OR (r.target_id = e.id
                                   AND NOT r.rel_type = ANY({bidirectional}::text[])))
                              AND NOT r.rel_type = ANY({skipped}::text[])
                              AND {visible("r", npc)}
                            ORDER BY r.rel_type, other_id, r.id
                            -- Sorted before the join (the planner, expecting a dozen rows,
                            -- would join first), so that the join stops at the limit.
                            OFFSET 0
                        ) ranked
                        JOIN entities o ON o.campaign_id = $1 AND o.id = ranked.other_id
                        WHERE {entity_visible("o", npc)}
                        ORDER BY ranked.rel_type, ranked.other_id, ranked.id
                        LIMIT {params.add(max_relationships)}
                    ) top
                ), '[]'::json), 'facts', {facts})::text AS snapshot
            FROM entities e
            JOIN unnest($2::text[]) WITH ORDINALITY AS wanted(id, position) ON wanted.id = e.id
            WHERE e.campaign_id = $1 AND {entity_visible("e", npc)}
            ORDER BY wanted.position
        """
        with driver_errors("read entity snapshots"):
            rows = await self._pool.fetch(sql, *params.values)
        return [IdentitySnapshot.model_validate_json(row["snapshot"]) for row in rows]

    async def entity_names(self, npc_id: str | None = None) -> list[Entity]:
        """Every entity the NPC may know, for name resolution (attributes left out, but for
        what names an episode), in order of id (code point order, as Python sorts them, so
        that a list patched in Python keeps the order a fresh read gives)."""
        sql = f"""
            SELECT {NAME_COLUMNS}
            FROM entities e WHERE e.campaign_id = $1 AND {entity_visible("e", "$2")}
            ORDER BY e.id COLLATE "C"
        """
        with driver_errors("read entity names"):
            rows = await self._pool.fetch(sql, self.campaign_id, npc_id)
        return [entity_from_row(row) for row in rows]

    async def entity_changes(self, since: int) -> EntityChanges:
        """The entities changed after version `since` of the campaign's entities (sql/025),
        as `entity_names` reads them, with the version they are current at: one statement,
        so the version, the log and the rows are one snapshot. `complete` is False when the
        log no longer reaches back to `since` (pruned): then everything must be read."""
        sql = f"""
            WITH current AS (
                SELECT v.version, $2 >= v.version OR EXISTS (
                    SELECT 1 FROM entity_changes c
                    WHERE c.campaign_id = $1 AND c.version <= $2 + 1
                ) AS complete
                FROM (SELECT coalesce((
                    SELECT version FROM entity_versions WHERE campaign_id = $1
                ), 0) AS version) v
            ), changed AS (
                SELECT DISTINCT c.entity_id FROM entity_changes c
                WHERE c.campaign_id = $1 AND c.version > $2
                  AND c.version <= (SELECT version FROM current)
            )
            SELECT current.version AS current_version, current.complete,
                   changed.entity_id AS changed_id, {NAME_COLUMNS}
            FROM current
            -- One row even when nothing changed, to carry the version.
            LEFT JOIN changed ON true
            LEFT JOIN entities e ON e.campaign_id = $1 AND e.id = changed.entity_id
        """
        with driver_errors("read the changed entities"):
            rows = await self._pool.fetch(sql, self.campaign_id, since)
        version, complete = int(rows[0]["current_version"]), bool(rows[0]["complete"])
        changed = {row["changed_id"] for row in rows if row["changed_id"] is not None}
        return EntityChanges(
            version=version,
            complete=complete or version == since,
            changed_ids=frozenset(changed),
            entities=tuple(entity_from_row(row) for row in rows if row["id"] is not None),
        )

    async def visible_entity_ids(self, npc_id: str) -> list[str]:
        """The ids of every entity the NPC may know."""
        sql = f"""
            SELECT e.id FROM entities e
            WHERE e.campaign_id = $1 AND {entity_visible("e", "$2")} ORDER BY e.id
        """
        with driver_errors(f"read what {npc_id!r} may know"):
            rows = await self._pool.fetch(sql, self.campaign_id, npc_id)
        return [row["id"] for row in rows]

    async def session_entities(
        self, session_id: str, npc_id: str | None = None
    ) -> list[EntityLabel]:
        """Entities involved in a session: tagged in its chunks, speaking in it, or the subject
        or an end of facts and relationships sourced from it."""
        args: tuple[str, ...] = (self.campaign_id, session_id)
        sql = SESSION_ENTITIES_FOR_THE_DM
        if npc_id is not None:
            args, sql = (*args, npc_id), SESSION_ENTITIES_FOR_AN_NPC
        with driver_errors(f"read the entities of session {session_id!r}"):
            rows = await self._pool.fetch(sql, *args)
        return [EntityLabel(id=row["id"], type=row["type"], name=row["name"]) for row in rows]

    async def chunks_near_entities(
        self,
        anchor_ids: Sequence[str],
        embedding: Sequence[float],
        *,
        depth: int = 1,
        k: int = 10,
        npc_id: str | None = None,
        filters: SearchFilters = NO_FILTERS,
    ) -> list[ChunkInContext]:
        """GraphRAG over L2: chunks that mention an entity within `depth` hops of the anchors
        (walked as `npc_id` knows the graph), of those `filters` keep (a session, speakers,
        times, what the reader may read), ranked by cosine distance to `embedding`."""
        vector = checked_embedding(embedding, self.dimension)
        params = Params(self.campaign_id)
        walk = walk_cte(params, anchors=anchor_ids, depth=depth, npc_id=npc_id)
        query_vector = params.add(vector)
        sql = f"""
            WITH RECURSIVE {walk},
            scope AS (SELECT id, min(depth) AS depth FROM walk GROUP BY id)
            SELECT {CHUNK_COLUMNS}, c.embedding <=> {query_vector} AS distance,
                   linked.ids AS linked_entity_ids, linked.depth AS graph_distance
            FROM chunks c
            CROSS JOIN LATERAL (
                SELECT array_agg(s.id ORDER BY s.depth, s.id) AS ids, min(s.depth) AS depth
                FROM scope s WHERE s.id = ANY(c.entity_ids)
            ) linked
            WHERE c.campaign_id = $1
              AND c.entity_ids && (SELECT coalesce(array_agg(id), '{{}}') FROM scope)
              AND {where(chunk_conditions(filters, params, "c"))}
            ORDER BY distance, c.id
            LIMIT {params.add(k)}
        """
        with driver_errors("search chunks around the graph"):
            rows = await self._pool.fetch(sql, *params.values)
        return [
            ChunkInContext(
                match=ChunkMatch(chunk=chunk_from_row(row), distance=row["distance"]),
                linked_entity_ids=tuple(row["linked_entity_ids"]),
                graph_distance=row["graph_distance"],
            )
            for row in rows
        ]

    async def facts_near_entities(
        self,
        anchor_ids: Sequence[str],
        query: str,
        *,
        depth: int = 1,
        k: int = 10,
        npc_id: str | None = None,
    ) -> list[FactMatch]:
        """GraphRAG over facts: current facts about entities within `depth` hops of the anchors
        that match the query's words, ranked by text relevance discounted by graph distance."""
        checked_query(query)
        params = Params(self.campaign_id)
        walk = walk_cte(params, anchors=anchor_ids, depth=depth, npc_id=npc_id)
        npc = params.add(npc_id)
        tsquery = or_tsquery(params.add(query))
        conditions = [
            "f.campaign_id = $1",
            "f.superseded_by IS NULL",
            "f.tsv @@ q.query",
            visible("f", npc),
        ]
        sql = f"""
            WITH RECURSIVE {walk},
            scope AS (SELECT id, min(depth) AS depth FROM walk GROUP BY id)
            SELECT {FACT_COLUMNS}, s.depth AS graph_distance,
                   ts_rank_cd(f.tsv, q.query) / (1 + s.depth) AS score
            FROM facts f
            JOIN scope s ON s.id = f.subject_id
            CROSS JOIN (SELECT {tsquery} AS query) q
            WHERE {where(conditions)}
            ORDER BY score DESC, f.id
            LIMIT {params.add(k)}
        """
        with driver_errors("search facts around the graph"):
            rows = await self._pool.fetch(sql, *params.values)
        return [
            FactMatch(
                fact=fact_from_row(row), score=row["score"], graph_distance=row["graph_distance"]
            )
            for row in rows
        ]
