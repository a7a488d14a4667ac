"""A session's summary parts (sql/033): each scene's text and gist, in order."""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.session_summaries import SummaryPart

DELETE_PARTS = "DELETE FROM summary_parts WHERE campaign_id = $1 AND session_id = $2"
INSERT_PART = """
INSERT INTO summary_parts (campaign_id, session_id, ordinal, scene_started_at, text, gist)
VALUES ($1, $2, $3, $4, $5, $6)
"""
SELECT_PARTS = """
SELECT scene_started_at, text, gist FROM summary_parts
WHERE campaign_id = $1 AND session_id = $2 ORDER BY ordinal
"""


class SummaryParts:
    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def replace(self, session_id: str, parts: Sequence[SummaryPart]) -> None:
        """The session's parts become `parts` (none: the session has no parts), in one
        transaction."""
        rows = [
            (self.campaign_id, session_id, ordinal, part.scene_started_at, part.text, part.gist)
            for ordinal, part in enumerate(parts)
        ]
        with driver_errors(f"store the summary parts of session {session_id!r}"):
            async with self._pool.acquire() as conn, conn.transaction():
                await conn.execute(DELETE_PARTS, self.campaign_id, session_id)
                if rows:
                    await conn.executemany(INSERT_PART, rows)

    async def parts_of(self, session_id: str) -> list[SummaryPart]:
        """The session's parts in order; none when its summary has no parts (the DM's own,
        or a session not ended)."""
        with driver_errors(f"read the summary parts of session {session_id!r}"):
            rows = await self._pool.fetch(SELECT_PARTS, self.campaign_id, session_id)
        return [
            SummaryPart(scene_started_at=r["scene_started_at"], text=r["text"], gist=r["gist"])
            for r in rows
        ]
