"""What is stored where: the figures behind `glyphoxa-mcp status`."""

from __future__ import annotations

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.db.migrations import schema_version
from glyphoxa_mcp.db.vector_connection import SELECT_PGVECTOR_VERSION
from glyphoxa_mcp.domain.listings import CampaignCounts, DatabaseStatus

# One row per campaign; each count is its own indexed aggregate.
CAMPAIGN_COUNTS = """
SELECT c.id, c.name,
    (SELECT count(*) FROM sessions s WHERE s.campaign_id = c.id) AS sessions,
    (SELECT count(*) FROM session_entries x WHERE x.campaign_id = c.id) AS entries,
    (SELECT count(*) FROM chunks x WHERE x.campaign_id = c.id) AS chunks,
    (SELECT count(*) FROM entities x WHERE x.campaign_id = c.id) AS entities,
    (SELECT count(*) FROM relationships x WHERE x.campaign_id = c.id) AS relationships,
    (SELECT count(*) FROM facts x WHERE x.campaign_id = c.id AND x.superseded_by IS NULL) AS facts
FROM campaigns c ORDER BY c.id
"""


async def database_status(db: Database) -> DatabaseStatus:
    with driver_errors("read the database status"):
        async with db.pool.acquire() as conn:
            server_version = await conn.fetchval("SHOW server_version")
            pgvector_version = await conn.fetchval(SELECT_PGVECTOR_VERSION)
            version = await schema_version(conn)
            rows = await conn.fetch(CAMPAIGN_COUNTS)
    return DatabaseStatus(
        location=db.location.description,
        server_version=server_version,
        pgvector_version=pgvector_version,
        schema_version=version,
        embedding_dim=db.embedding_dim,
        campaigns=tuple(CampaignCounts(**dict(row)) for row in rows),
    )
