"""Reading lore sections in a viewer's scope: by the query's words (BM25 over the postings of
sql/028), by meaning (the sections' vectors), and those pinned to an NPC."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.models import Frozen, Visibility, checked_embedding, checked_query
from glyphoxa_mcp.storage.sql_parts import Params, knowing, where
from glyphoxa_mcp.storage.vector_search import exact_variant, nearest_rows
from glyphoxa_mcp.storage.word_ranking import WordSearch, rank_by_words

PASSAGE_COLUMNS = """l.id, l.document_id, l.heading, l.ordinal, l.text, l.secret, l.known_by,
    (SELECT ld.title FROM lore_documents ld
     WHERE ld.campaign_id = l.campaign_id AND ld.id = l.document_id) AS document_title"""
# Within one NPC's pins, in the order they were pinned, each section's pieces in order.
SELECT_PINNED = f"""
SELECT {PASSAGE_COLUMNS}
FROM lore_pins p
JOIN lore_sections l
  ON l.campaign_id = p.campaign_id AND l.document_id = p.document_id AND l.heading = p.heading
WHERE p.campaign_id = $1 AND p.npc_id = $2 AND glyphoxa_visible(l.secret, l.known_by, $2)
ORDER BY p.pinned_at, p.document_id, l.ordinal
"""


class LorePassage(Frozen):
    """A piece of a lore section, as search and the hot context read it."""

    id: int
    document_id: str
    document_title: str
    heading: str
    ordinal: int
    text: str
    visibility: Visibility


class LoreMatch(Frozen):
    passage: LorePassage
    score: float


def passage_from_row(row: asyncpg.Record) -> LorePassage:
    return LorePassage(
        id=row["id"],
        document_id=row["document_id"],
        document_title=row["document_title"],
        heading=row["heading"],
        ordinal=row["ordinal"],
        text=row["text"],
        visibility=Visibility(secret=row["secret"], known_by=tuple(row["known_by"])),
    )


class LoreQueries:
    """Searches over one campaign's lore, within an NPC's scope (None: the DM)."""

    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.dimension = db.embedding_dim
        self.campaign_id = campaign_id

    async def by_text(self, query: str, *, k: int, npc_id: str | None) -> list[LoreMatch]:
        """Sections sharing words with the query (or their headings), best first (BM25)."""
        params = Params(self.campaign_id)
        npc = params.add_given(npc_id)
        text = params.add(checked_query(query))
        search = WordSearch(
            table="lore_sections",
            alias="l",
            columns=PASSAGE_COLUMNS,
            conditions=knowing("l", npc),
            query=text,
            limit=params.add(k),
            k=k,
        )
        with driver_errors("search lore"):
            rows = await rank_by_words(self._pool, search, params)
        return [LoreMatch(passage=passage_from_row(row), score=row["rank"]) for row in rows]

    async def by_vector(
        self, embedding: Sequence[float], *, k: int, npc_id: str | None
    ) -> list[LoreMatch]:
        """Sections nearest the query vector (score: cosine similarity)."""
        vector = checked_embedding(embedding, self.dimension)
        params = Params(self.campaign_id)
        npc = params.add_given(npc_id)
        query_vector = params.add(vector)
        conditions = ["l.campaign_id = $1", *knowing("l", npc)]
        select = f"""
            SELECT {PASSAGE_COLUMNS}, l.embedding <=> {query_vector} AS distance
            FROM lore_sections l
            WHERE {where(conditions)}
        """
        limit = params.add(k)
        approximate = f"{select} ORDER BY l.embedding <=> {query_vector} LIMIT {limit}"
        exact = exact_variant(select, "distance, id", limit)
        with driver_errors("search lore by meaning"):
            rows = await nearest_rows(
                self._pool, approximate=approximate, exact=exact, args=params.values, k=k
            )
        return [LoreMatch(passage=passage_from_row(row), score=1 - row["distance"]) for row in rows]

    async def pinned_for(self, npc_id: str) -> list[LorePassage]:
        """The sections pinned to the NPC that it may read, in the order they were pinned."""
        with driver_errors(f"read the lore pinned to {npc_id!r}"):
            rows = await self._pool.fetch(SELECT_PINNED, self.campaign_id, npc_id)
        return [passage_from_row(row) for row in rows]
