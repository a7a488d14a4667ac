"""Entities proposed by an import, held back from the graph until the DM reviews them."""

from __future__ import annotations

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.models import NewEntity
from glyphoxa_mcp.domain.review_items import PendingEntity, PendingSource
from glyphoxa_mcp.errors import NotFoundError

UPSERT = """
INSERT INTO pending_entities (campaign_id, source, source_ref, proposal)
VALUES ($1, $2, $3, $4)
ON CONFLICT (campaign_id, source, source_ref) DO UPDATE SET proposal = EXCLUDED.proposal
RETURNING id
"""
SELECT_ALL = """
SELECT id, source, source_ref, proposal FROM pending_entities WHERE campaign_id = $1 ORDER BY id
"""
SELECT_ONE = """
SELECT id, source, source_ref, proposal FROM pending_entities WHERE campaign_id = $1 AND id = $2
"""
DELETE = "DELETE FROM pending_entities WHERE campaign_id = $1 AND id = $2"
REVISE = "UPDATE pending_entities SET proposal = $3 WHERE campaign_id = $1 AND id = $2"


class PendingEntities:
    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def propose(self, source: PendingSource, source_ref: str, entity: NewEntity) -> int:
        with driver_errors(f"hold {entity.name!r} for review"):
            return int(
                await self._pool.fetchval(
                    UPSERT, self.campaign_id, source, source_ref, entity.model_dump(mode="json")
                )
            )

    async def list(self) -> list[PendingEntity]:
        with driver_errors("read pending imports"):
            rows = await self._pool.fetch(SELECT_ALL, self.campaign_id)
        return [_pending(row) for row in rows]

    async def revise(self, pending_id: int, entity: NewEntity) -> None:
        """The DM's edit of a proposal, still waiting for review."""
        with driver_errors(f"edit import {pending_id}"):
            status = await self._pool.execute(
                REVISE, self.campaign_id, pending_id, entity.model_dump(mode="json")
            )
        if status.endswith(" 0"):
            raise NotFoundError(self._unknown(pending_id))

    async def take(self, pending_id: int) -> PendingEntity:
        """Remove a proposal from the queue and return it (to apply or to drop)."""
        with driver_errors(f"read import {pending_id}"):
            row = await self._pool.fetchrow(SELECT_ONE, self.campaign_id, pending_id)
            if row is None:
                raise NotFoundError(self._unknown(pending_id))
            await self._pool.execute(DELETE, self.campaign_id, pending_id)
        return _pending(row)

    def _unknown(self, pending_id: int) -> str:
        return (
            f"No pending import {pending_id} in campaign {self.campaign_id!r}; "
            "`review list` shows them."
        )


def _pending(row: asyncpg.Record) -> PendingEntity:
    return PendingEntity(
        id=row["id"],
        source=row["source"],
        source_ref=row["source_ref"],
        entity=NewEntity.model_validate(row["proposal"]),
    )
