"""Facts and relationships waiting for their vector, and storing the vectors once made.

A fact or a relationship is written first and embedded after (the embedder may be slow or
down), so its `embedding` stays NULL until a vector arrives; the partial indexes of sql/021
find those rows. A fact's text never changes in place (a retcon writes a new row); a
relationship's sentence changes with its ends' names, and sql/021 clears its vector when
one is renamed. A vector is stored only into a row still without one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.models import checked_embedding

# Current facts only: a superseded version is history and never searched. Keyed on id so a
# backfill walks forward even past rows it could not embed.
SELECT_UNEMBEDDED_FACTS = """
SELECT campaign_id, id, text FROM facts
WHERE embedding IS NULL AND superseded_by IS NULL AND id > $1
  AND ($2::text IS NULL OR campaign_id = $2)
ORDER BY id
LIMIT $3
"""
COUNT_UNEMBEDDED_FACTS = """
SELECT count(*) FROM facts
WHERE embedding IS NULL AND superseded_by IS NULL AND ($1::text IS NULL OR campaign_id = $1)
"""
STORE_FACT_EMBEDDING = """
UPDATE facts SET embedding = $3 WHERE campaign_id = $1 AND id = $2 AND embedding IS NULL
"""
SELECT_UNEMBEDDED_RELATIONSHIPS = """
SELECT r.campaign_id, r.id, s.name AS source_name, r.rel_type, t.name AS target_name
FROM relationships r
JOIN entities s ON s.campaign_id = r.campaign_id AND s.id = r.source_id
JOIN entities t ON t.campaign_id = r.campaign_id AND t.id = r.target_id
WHERE r.embedding IS NULL AND r.id > $1 AND ($2::text IS NULL OR r.campaign_id = $2)
ORDER BY r.id
LIMIT $3
"""
COUNT_UNEMBEDDED_RELATIONSHIPS = """
SELECT count(*) FROM relationships
WHERE embedding IS NULL AND ($1::text IS NULL OR campaign_id = $1)
"""
STORE_RELATIONSHIP_EMBEDDING = """
UPDATE relationships SET embedding = $3
WHERE campaign_id = $1 AND id = $2 AND embedding IS NULL
"""


@dataclass(frozen=True)
class UnembeddedFact:
    campaign_id: str
    id: int
    text: str


@dataclass(frozen=True)
class UnembeddedRelationship:
    campaign_id: str
    id: int
    source_name: str
    rel_type: str
    target_name: str


Unembedded = UnembeddedFact | UnembeddedRelationship


async def _store(
    db: Database, statement: str, vectors: Sequence[tuple[Unembedded, Sequence[float]]]
) -> None:
    checked = [
        (item.campaign_id, item.id, checked_embedding(vector, db.embedding_dim))
        for item, vector in vectors
    ]
    if not checked:
        return
    async with db.pool.acquire() as conn, conn.transaction():
        await conn.executemany(statement, checked)


class FactVectors:
    """Facts without a vector, in one campaign or (campaign None) in all of them."""

    def __init__(self, db: Database, campaign_id: str | None = None) -> None:
        self._db = db
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def missing(self, *, after_id: int = 0, limit: int) -> list[UnembeddedFact]:
        """Up to `limit` current facts without a vector, by id, after `after_id`."""
        with driver_errors("read the facts without a vector"):
            rows = await self._pool.fetch(
                SELECT_UNEMBEDDED_FACTS, after_id, self.campaign_id, limit
            )
        return [UnembeddedFact(row["campaign_id"], row["id"], row["text"]) for row in rows]

    async def count_missing(self) -> int:
        with driver_errors("count the facts without a vector"):
            return int(await self._pool.fetchval(COUNT_UNEMBEDDED_FACTS, self.campaign_id))

    async def store(self, vectors: Sequence[tuple[UnembeddedFact, Sequence[float]]]) -> None:
        """Store each fact's vector, all in one transaction; a fact that has one keeps it."""
        with driver_errors("store the facts' vectors"):
            await _store(self._db, STORE_FACT_EMBEDDING, vectors)


class RelationshipVectors:
    """Relationships without a vector, in one campaign or (campaign None) in all of them."""

    def __init__(self, db: Database, campaign_id: str | None = None) -> None:
        self._db = db
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def missing(self, *, after_id: int = 0, limit: int) -> list[UnembeddedRelationship]:
        """Up to `limit` relationships without a vector, by id, after `after_id`, with the
        names of their ends."""
        with driver_errors("read the relationships without a vector"):
            rows = await self._pool.fetch(
                SELECT_UNEMBEDDED_RELATIONSHIPS, after_id, self.campaign_id, limit
            )
        return [
            UnembeddedRelationship(
                row["campaign_id"],
                row["id"],
                row["source_name"],
                row["rel_type"],
                row["target_name"],
            )
            for row in rows
        ]

    async def count_missing(self) -> int:
        with driver_errors("count the relationships without a vector"):
            return int(await self._pool.fetchval(COUNT_UNEMBEDDED_RELATIONSHIPS, self.campaign_id))

    async def store(
        self, vectors: Sequence[tuple[UnembeddedRelationship, Sequence[float]]]
    ) -> None:
        """Store each relationship's vector, all in one transaction; one that has a vector
        keeps it."""
        with driver_errors("store the relationships' vectors"):
            await _store(self._db, STORE_RELATIONSHIP_EMBEDDING, vectors)
