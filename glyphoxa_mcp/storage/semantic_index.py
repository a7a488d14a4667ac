"""L2: transcript chunks with embeddings, searched by cosine distance."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.models import (
    NO_FILTERS,
    Chunk,
    ChunkMatch,
    ChunkTextMatch,
    NewChunk,
    SearchFilters,
    checked_embedding,
    checked_query,
)
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.storage.sql_parts import Params, chunk_conditions, where
from glyphoxa_mcp.storage.vector_search import exact_variant, nearest_rows
from glyphoxa_mcp.storage.word_ranking import WordSearch, rank_by_words

CHUNK_COLUMNS = (
    "c.id, c.session_id, c.content, c.speaker_ids, c.npc_ids, c.entity_ids, c.topics, "
    "c.started_at, c.ended_at, c.entry_ids, c.dm_only"
)
# Passages arrive in batches: one COPY into a staging table and one INSERT ... SELECT
# instead of a statement each (the round trips cost more than the rows). The staging table
# has the columns of the COPY, in its order.
CREATE_INCOMING = """
CREATE TEMP TABLE incoming_chunks (
    session_id text, content text, content_hash bytea, embedding vector, speaker_ids text[],
    npc_ids text[], entity_ids text[], topics text[], started_at timestamptz,
    ended_at timestamptz, entry_ids bigint[]
) ON COMMIT DROP
"""
COPY_COLUMNS = [
    "session_id", "content", "content_hash", "embedding", "speaker_ids", "npc_ids",
    "entity_ids", "topics", "started_at", "ended_at", "entry_ids",
]  # fmt: skip
# Re-inserting the same content returns the stored row; its tags are kept as they were.
# Rows go in content-hash order, one per hash (the first given), so transactions holding
# some of the same passages wait for each other instead of deadlocking.
INSERT_INCOMING = """
INSERT INTO chunks
    (campaign_id, session_id, content, content_hash, embedding, speaker_ids, npc_ids,
     entity_ids, topics, started_at, ended_at, entry_ids)
SELECT DISTINCT ON (content_hash)
       $1, session_id, content, content_hash, embedding, speaker_ids, npc_ids, entity_ids,
       topics, started_at, ended_at, entry_ids
FROM incoming_chunks ORDER BY content_hash
ON CONFLICT (campaign_id, content_hash) DO UPDATE SET content_hash = EXCLUDED.content_hash
RETURNING id, content_hash
"""
# The entities tagged in a session's passages, with how many passages tag each: read by
# get_session_summary instead of unnesting every passage (sql/011, sql/014).
FORGET_SESSION_ENTITIES = """
DELETE FROM session_chunk_entities WHERE campaign_id = $1 AND session_id = $2
"""
TALLY_SESSION_ENTITIES = """
INSERT INTO session_chunk_entities (campaign_id, session_id, entity_id, chunk_count)
SELECT campaign_id, session_id, entity_id, count(*)
FROM chunks CROSS JOIN LATERAL unnest(entity_ids) AS entity_id
WHERE campaign_id = $1 AND session_id = $2
GROUP BY campaign_id, session_id, entity_id
"""
SELECT_BY_IDS = f"""
SELECT {CHUNK_COLUMNS} FROM chunks c
WHERE c.campaign_id = $1 AND c.id = ANY($2::bigint[])
ORDER BY c.started_at, c.id
"""


def content_hash(content: str) -> bytes:
    """Content that differs only in spacing is the same content."""
    return hashlib.sha256(" ".join(content.split()).encode()).digest()


def chunk_from_row(row: asyncpg.Record) -> Chunk:
    return Chunk(**{key: row[key] for key in Chunk.model_fields})


class SemanticIndex:
    """The embedded chunks of one campaign."""

    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.dimension = db.embedding_dim
        self.campaign_id = campaign_id

    async def upsert(self, chunks: Sequence[NewChunk]) -> list[int]:
        """Store chunks; returns one id per chunk, the stored one for content seen before
        (or given earlier in the same batch). Safe beside other writers."""
        if not chunks:
            return []
        for chunk in chunks:
            checked_embedding(chunk.embedding, self.dimension)
        hashes = [content_hash(chunk.content) for chunk in chunks]
        records = [
            (
                chunk.session_id,
                chunk.content,
                chunk_hash,
                chunk.embedding,
                list(chunk.speaker_ids),
                list(chunk.npc_ids),
                list(chunk.entity_ids),
                list(chunk.topics),
                chunk.started_at,
                chunk.ended_at,
                list(chunk.entry_ids),
            )
            for chunk, chunk_hash in zip(chunks, hashes, strict=True)
        ]
        with driver_errors(f"store {len(chunks)} chunks"):
            async with self._pool.acquire() as conn, conn.transaction():
                await conn.execute(CREATE_INCOMING)
                await conn.copy_records_to_table(
                    "incoming_chunks", records=records, columns=COPY_COLUMNS
                )
                rows = await conn.fetch(INSERT_INCOMING, self.campaign_id)
                # ON COMMIT DROP waits for the outermost commit; a caller's transaction may
                # store again before that.
                await conn.execute("DROP TABLE incoming_chunks")
        stored = {row["content_hash"]: row["id"] for row in rows}
        return [stored[chunk_hash] for chunk_hash in hashes]

    async def stored_hashes(self, session_id: str) -> set[bytes]:
        """The content hashes of the session's chunks: what processing need not redo."""
        with driver_errors(f"read the chunks of session {session_id!r}"):
            rows = await self._pool.fetch(
                "SELECT content_hash FROM chunks WHERE campaign_id = $1 AND session_id = $2",
                self.campaign_id,
                session_id,
            )
        return {row["content_hash"] for row in rows}

    async def remove_stale(self, session_id: str, current: set[bytes]) -> int:
        """Delete the session's chunks whose content is no longer among its passages (cut
        from text that has since been corrected); returns how many."""
        with driver_errors(f"remove stale chunks of session {session_id!r}"):
            status = await self._pool.execute(
                "DELETE FROM chunks WHERE campaign_id = $1 AND session_id = $2 "
                "AND NOT content_hash = ANY($3::bytea[])",
                self.campaign_id,
                session_id,
                list(current),
            )
        return int(status.split()[-1])

    async def tally_session_entities(self, session_id: str) -> None:
        """Count again which entities the session's passages tag (after storing or removing
        them): what get_session_summary lists."""
        with driver_errors(f"count the entities of session {session_id!r}"):
            async with self._pool.acquire() as conn, conn.transaction():
                await conn.execute(FORGET_SESSION_ENTITIES, self.campaign_id, session_id)
                await conn.execute(TALLY_SESSION_ENTITIES, self.campaign_id, session_id)

    async def get_many(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        with driver_errors("read chunks"):
            rows = await self._pool.fetch(SELECT_BY_IDS, self.campaign_id, list(chunk_ids))
        return [chunk_from_row(row) for row in rows]

    async def nearest(
        self, embedding: Sequence[float], filters: SearchFilters = NO_FILTERS, k: int = 10
    ) -> list[ChunkMatch]:
        """The `k` chunks closest to `embedding` by cosine distance, nearest first.

        A filter never hides a match: see `vector_search`.
        """
        vector = checked_embedding(embedding, self.dimension)
        if k < 1:
            raise InvalidInputError(f"k must be at least 1; got {k}.", field="k")
        params = Params(self.campaign_id, vector)
        filtering = chunk_conditions(filters, params, "c")
        conditions = ["c.campaign_id = $1", *filtering]
        limit = params.add(k)
        select = f"""
            SELECT {CHUNK_COLUMNS}, c.embedding <=> $2 AS distance FROM chunks c
            WHERE {where(conditions)}
        """
        approximate = f"{select} ORDER BY c.embedding <=> $2 LIMIT {limit}"
        exact = exact_variant(select, "distance, id", limit)
        with driver_errors("search the semantic index"):
            rows = await nearest_rows(
                self._pool,
                approximate=approximate,
                exact=exact,
                args=params.values,
                k=k,
                filtered=bool(filtering),
            )
        return [ChunkMatch(chunk=chunk_from_row(row), distance=row["distance"]) for row in rows]

    async def search_text(
        self, query: str, filters: SearchFilters = NO_FILTERS, k: int = 10
    ) -> list[ChunkTextMatch]:
        """Chunks sharing words with the query, most relevant first (BM25 `rank`)."""
        params = Params(self.campaign_id)
        text = params.add(checked_query(query))
        search = WordSearch(
            table="chunks",
            alias="c",
            columns=CHUNK_COLUMNS,
            conditions=chunk_conditions(filters, params, "c"),
            selective=filters.session_id is not None,
            filter_first=filters.reader is not None,
            reader=None if filters.reader is None else params.add(filters.reader),
            query=text,
            limit=params.add(k),
            k=k,
        )
        with driver_errors("search the semantic index by words"):
            rows = await rank_by_words(self._pool, search, params)
        return [ChunkTextMatch(chunk=chunk_from_row(row), rank=row["rank"]) for row in rows]
