"""The model that made a database's vectors, recorded once and checked at every start."""

from __future__ import annotations

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.errors import EmbeddingModelMismatchError

# Only the first process to get here records its model; the others read the record.
RECORD_MODEL = """
INSERT INTO embedding_model (model) VALUES ($1)
ON CONFLICT (only_row) DO NOTHING
"""
SELECT_MODEL = "SELECT model FROM embedding_model"


async def check_embedding_model(db: Database, model: str) -> None:
    """Record `model` as the database's embedding model if none is recorded yet; refuse it,
    with what to do, when another one is."""
    with driver_errors("check the database's embedding model"):
        await db.pool.execute(RECORD_MODEL, model)
        recorded = str(await db.pool.fetchval(SELECT_MODEL))
    if recorded != model:
        raise EmbeddingModelMismatchError(
            f"This database's vectors were made by {recorded!r}, but the configured embedder is "
            f"{model!r}: its vectors would not match them. Configure {recorded!r} again "
            "(GLYPHOXA_EMBEDDER=local for the offline models, GLYPHOXA_EMBEDDING_MODEL for an "
            "OpenAI-compatible one; an API key in the environment selects OpenAI unless "
            "GLYPHOXA_EMBEDDER is set), or point --data-dir / --dsn at a new database."
        )
