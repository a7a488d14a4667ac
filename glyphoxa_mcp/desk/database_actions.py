"""The database as a whole: what it holds, and the facts and relationships still waiting for
a vector (written while the embedder was down), embedded."""

from __future__ import annotations

from dataclasses import dataclass

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.listings import DatabaseStatus
from glyphoxa_mcp.domain.reports import Embedded
from glyphoxa_mcp.pipeline.fact_embedding import embed_missing
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.storage import status
from glyphoxa_mcp.storage.fact_vectors import FactVectors, RelationshipVectors


@dataclass(frozen=True)
class Unembedded:
    facts: int
    relationships: int


async def database_status(db: Database) -> DatabaseStatus:
    """Where the database is, its versions, and each campaign's counts."""
    return await status.database_status(db)


async def count_unembedded(db: Database, campaign_id: str | None = None) -> Unembedded:
    """The facts and relationships without a vector (in one campaign, or in all)."""
    facts = await FactVectors(db, campaign_id).count_missing()
    return Unembedded(facts, await RelationshipVectors(db, campaign_id).count_missing())


async def embed_unembedded(
    db: Database, embedder: Embedder, campaign_id: str | None = None
) -> Embedded:
    """Embed them a batch at a time, each batch committed: safe to stop and run again."""
    return await embed_missing(db, embedder, campaign_id)
