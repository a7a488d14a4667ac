"""L3 fact search: full-text and vector rankings of current facts, and the vector ranking of
relationships (by their sentences' vectors), filtered in SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.models import (
    FactMatch,
    Relationship,
    checked_embedding,
    checked_query,
)
from glyphoxa_mcp.storage.knowledge_graph import (
    FACT_COLUMNS,
    RELATIONSHIP_COLUMNS,
    fact_from_row,
    relationship_from_row,
)
from glyphoxa_mcp.storage.sql_parts import Params, entity_visible_by_id, knowing, visible, where
from glyphoxa_mcp.storage.vector_search import exact_variant, nearest_rows
from glyphoxa_mcp.storage.word_ranking import WordSearch, rank_by_words


@dataclass(frozen=True)
class FactFilters:
    subject_ids: tuple[str, ...] | None = None
    session_id: str | None = None
    real_after: datetime | None = None
    real_before: datetime | None = None
    story_after: float | None = None
    story_before: float | None = None


# A DM's search whose filters narrow the facts through an index (a subject, a session, a span
# of story or real time) to no more than this many ranks them exactly, read through that
# index: the vector index cannot narrow, and to find a few facts among 20,000 it reads
# thousands of entries. Ranking a fact exactly costs a few microseconds; the vector index's
# search of a wide filter about a millisecond or two.
FEW_NARROWED = 512


def _conditions(filters: FactFilters, params: Params, npc: str | None) -> list[str]:
    """Current facts the NPC (its placeholder; None: the DM) may know that the filters keep
    (besides the campaign), about a subject it may know."""
    return [*_known(npc), *_narrowing(filters, params)]


def _known(npc: str | None) -> list[str]:
    """Current facts the NPC (its placeholder) may know, about a subject it may know; for
    the DM no conditions of knowing at all (see `knowing`: every subject exists, its
    foreign key cascades)."""
    conditions = ["f.superseded_by IS NULL", *knowing("f", npc)]
    if npc is not None:
        subject = entity_visible_by_id("f.subject_id", "f.campaign_id", npc)
        conditions.append(f"(f.subject_id IS NULL OR {subject})")
    return conditions


def _narrowing(filters: FactFilters, params: Params) -> list[str]:
    """The filters' conditions, each served by an index on facts (sql/001, 008, 040)."""
    conditions = []
    if filters.subject_ids is not None:
        conditions.append(f"f.subject_id = ANY({params.add(list(filters.subject_ids))}::text[])")
    if filters.session_id is not None:
        conditions.append(f"f.session_id = {params.add(filters.session_id)}")
    if filters.real_after is not None:
        conditions.append(f"f.occurred_at >= {params.add(filters.real_after)}")
    if filters.real_before is not None:
        conditions.append(f"f.occurred_at < {params.add(filters.real_before)}")
    if filters.story_after is not None:
        conditions.append(f"f.story_day >= {params.add(filters.story_after)}")
    if filters.story_before is not None:
        conditions.append(f"f.story_day < {params.add(filters.story_before)}")
    return conditions


class FactQueries:
    """Searches over one campaign's current facts, within an NPC's scope (None: the DM)."""

    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.dimension = db.embedding_dim
        self.campaign_id = campaign_id

    async def by_text(
        self, query: str, filters: FactFilters, *, k: int, npc_id: str | None
    ) -> list[FactMatch]:
        """Facts sharing words with the query, most relevant first (score: BM25)."""
        params = Params(self.campaign_id)
        npc = params.add_given(npc_id)
        text = params.add(checked_query(query))
        search = WordSearch(
            table="facts",
            alias="f",
            columns=FACT_COLUMNS,
            conditions=_conditions(filters, params, npc),
            query=text,
            limit=params.add(k),
            k=k,
            # An entity's or a session's facts are few, and found through an index.
            selective=filters.subject_ids is not None or filters.session_id is not None,
        )
        with driver_errors("search facts"):
            rows = await rank_by_words(self._pool, search, params)
        return [FactMatch(fact=fact_from_row(row), score=row["rank"]) for row in rows]

    async def by_vector(
        self, embedding: Sequence[float], filters: FactFilters, *, k: int, npc_id: str | None
    ) -> list[FactMatch]:
        """Embedded facts nearest the query vector (score: cosine similarity)."""
        vector = checked_embedding(embedding, self.dimension)
        params = Params(self.campaign_id)
        npc = params.add_given(npc_id)
        query_vector = params.add(vector)
        narrowing = _narrowing(filters, params)
        conditions = ["f.campaign_id = $1", "f.embedding IS NOT NULL", *_known(npc), *narrowing]
        select = f"""
            SELECT {FACT_COLUMNS}, f.embedding <=> {query_vector} AS distance
            FROM facts f
            WHERE {where(conditions)}
        """
        limit = params.add(k)
        approximate = f"{select} ORDER BY f.embedding <=> {query_vector} LIMIT {limit}"
        exact = exact_variant(select, "distance, id", limit)
        with driver_errors("search facts by meaning"):
            # The DM only: the DM may know every fact, so the way taken depends on nothing
            # hidden from the viewer. An NPC's count would have to leave out what it may not
            # know, fact by fact, and that costs as much as the span holds.
            if narrowing and npc is None:
                few = await self._pool.fetch(
                    _exact_if_few(conditions, narrowing, query_vector, limit), *params.values
                )
                if few[0]["few"]:
                    return [_match(row) for row in few if row["id"] is not None]
            rows = await nearest_rows(
                self._pool, approximate=approximate, exact=exact, args=params.values, k=k
            )
        return [_match(row) for row in rows]

    async def relationships_by_vector(
        self, embedding: Sequence[float], filters: FactFilters, *, k: int, npc_id: str | None
    ) -> list[tuple[Relationship, float]]:
        """Embedded relationships whose sentences are nearest the query vector, with their
        cosine similarity: those the NPC may know, both of whose ends it may know, touching
        the filters' subjects and learned in their session. (Relationships have no story
        time; real time is the caller's to check, from the provenance.)"""
        vector = checked_embedding(embedding, self.dimension)
        params = Params(self.campaign_id)
        npc = params.add(npc_id)
        query_vector = params.add(vector)
        conditions = [
            "r.campaign_id = $1",
            "r.embedding IS NOT NULL",
            visible("r", npc),
            entity_visible_by_id("r.source_id", "r.campaign_id", npc),
            entity_visible_by_id("r.target_id", "r.campaign_id", npc),
        ]
        if filters.subject_ids is not None:
            subjects = params.add(list(filters.subject_ids))
            conditions.append(
                f"(r.source_id = ANY({subjects}::text[]) OR r.target_id = ANY({subjects}::text[]))"
            )
        if filters.session_id is not None:
            conditions.append(f"r.provenance ->> 'session_id' = {params.add(filters.session_id)}")
        select = f"""
            SELECT {RELATIONSHIP_COLUMNS}, r.embedding <=> {query_vector} AS distance
            FROM relationships r
            WHERE {where(conditions)}
        """
        limit = params.add(k)
        approximate = f"{select} ORDER BY r.embedding <=> {query_vector} LIMIT {limit}"
        exact = exact_variant(select, "distance, id", limit)
        with driver_errors("search relationships by meaning"):
            rows = await nearest_rows(
                self._pool, approximate=approximate, exact=exact, args=params.values, k=k
            )
        return [(relationship_from_row(row), 1 - row["distance"]) for row in rows]


def _match(row: Record) -> FactMatch:
    return FactMatch(fact=fact_from_row(row), score=1 - row["distance"])


# The narrowing conditions' columns, each the second of an index after the campaign
# (sql/040, sql/008, sql/001): a span's first, whose order a range read follows.
_NARROWING_ORDER = ("f.story_day", "f.occurred_at", "f.session_id", "f.subject_id")


def _exact_if_few(
    conditions: Sequence[str], narrowing: Sequence[str], query_vector: str, limit: str
) -> str:
    """The facts `conditions` keep, nearest `query_vector` first, ranked exactly when no
    more than FEW_NARROWED of them are kept, read through the index of the `narrowing`
    conditions and counted up to one more than that: the rows with `few` true (one row of
    NULLs if none is kept), or one row with `few` false. Read in the order of that index
    (`_NARROWING_ORDER`), which the plan PostgreSQL keeps for no values in particular then
    takes too: without an order, that plan read a span through the whole table."""
    order = next(column for column in _NARROWING_ORDER if any(column in c for c in narrowing))
    return f"""
        WITH narrowed AS MATERIALIZED (
            SELECT f.id FROM facts f WHERE {where(list(conditions))}
            ORDER BY {order} LIMIT {FEW_NARROWED + 1}
        ),
        verdict AS (SELECT count(*) <= {FEW_NARROWED} AS few FROM narrowed)
        SELECT v.few, ranked.* FROM verdict v LEFT JOIN LATERAL (
            SELECT {FACT_COLUMNS}, f.embedding <=> {query_vector} AS distance
            FROM narrowed n JOIN facts f ON f.campaign_id = $1 AND f.id = n.id
            WHERE v.few
            ORDER BY distance, f.id LIMIT {limit}
        ) ranked ON true
    """
