"""Facts waiting for their vector, and storing the vectors once made.

A fact is written first and embedded after (the embedder may be slow or down), so its
`embedding` stays NULL until a vector arrives; the partial index of sql/021 finds those
rows. A fact's text never changes in place (a retcon writes a new row), so a vector stored
for a row always belongs to its text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.errors import driver_errors
from glyphoxa_mcp.storage.models import checked_embedding

# Current facts only: a superseded version is history and never searched. Keyed on id so a
# backfill walks forward even past rows it could not embed.
SELECT_UNEMBEDDED = """
SELECT campaign_id, id, text FROM facts
WHERE embedding IS NULL AND superseded_by IS NULL AND id > $1
  AND ($2::text IS NULL OR campaign_id = $2)
ORDER BY id
LIMIT $3
"""
COUNT_UNEMBEDDED = """
SELECT count(*) FROM facts
WHERE embedding IS NULL AND superseded_by IS NULL AND ($1::text IS NULL OR campaign_id = $1)
"""
# Only a row still without one: a vector stored meanwhile by another process is kept.
STORE_EMBEDDING = """
UPDATE facts SET embedding = $3 WHERE campaign_id = $1 AND id = $2 AND embedding IS NULL
"""


@dataclass(frozen=True)
class UnembeddedFact:
    campaign_id: str
    id: int
    text: str


class FactVectors:
    """Facts without a vector, in one campaign or (campaign None) in all of them."""

    def __init__(self, db: Database, campaign_id: str | None = None) -> None:
        self._pool = db.pool
        self.dimension = db.embedding_dim
        self.campaign_id = campaign_id

    async def missing(self, *, after_id: int = 0, limit: int) -> list[UnembeddedFact]:
        """Up to `limit` current facts without a vector, by id, after `after_id`."""
        with driver_errors("read the facts without a vector"):
            rows = await self._pool.fetch(SELECT_UNEMBEDDED, after_id, self.campaign_id, limit)
        return [UnembeddedFact(row["campaign_id"], row["id"], row["text"]) for row in rows]

    async def count_missing(self) -> int:
        with driver_errors("count the facts without a vector"):
            return int(await self._pool.fetchval(COUNT_UNEMBEDDED, self.campaign_id))

    async def store(self, vectors: Sequence[tuple[UnembeddedFact, Sequence[float]]]) -> None:
        """Store each fact's vector, all in one transaction; a fact that has one keeps it."""
        checked = [
            (fact.campaign_id, fact.id, checked_embedding(vector, self.dimension))
            for fact, vector in vectors
        ]
        if not checked:
            return
        with driver_errors("store the facts' vectors"):
            async with self._pool.acquire() as conn, conn.transaction():
                await conn.executemany(STORE_EMBEDDING, checked)
