"""Session facts: what holds for one session only ("the party is disguised as merchants"),
shown in the hot context of every NPC or of one, and gone when the session ends."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.models import SessionFact

COLUMNS = "session_id, key, npc_id, text, set_at"
SET_FACT = f"""
INSERT INTO session_facts (campaign_id, session_id, key, npc_id, text)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (campaign_id, session_id, key) DO UPDATE SET
    npc_id = EXCLUDED.npc_id, text = EXCLUDED.text, set_at = now()
RETURNING {COLUMNS}
"""
# $3 NULL: every fact of the session.
CLEAR_FACTS = """
DELETE FROM session_facts
WHERE campaign_id = $1 AND session_id = $2 AND ($3::text IS NULL OR key = $3)
RETURNING key
"""
SELECT_FACTS = f"""
SELECT {COLUMNS} FROM session_facts
WHERE campaign_id = $1 AND session_id = $2
ORDER BY set_at, key
"""
# What one viewer is shown: facts for every NPC and its own ($3 NULL: the DM sees all).
SELECT_FACTS_FOR = f"""
SELECT {COLUMNS} FROM session_facts
WHERE campaign_id = $1 AND session_id = $2
  AND ($3::text IS NULL OR npc_id IS NULL OR npc_id = $3)
ORDER BY set_at, key
"""


def _fact(row: asyncpg.Record) -> SessionFact:
    return SessionFact(**dict(row))


class SessionFacts:
    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def set(self, session_id: str, key: str, text: str, npc_id: str | None) -> SessionFact:
        """Set the fact named `key` (replacing one of that key)."""
        with driver_errors(f"set session fact {key!r} of session {session_id!r}"):
            row = await self._pool.fetchrow(
                SET_FACT, self.campaign_id, session_id, key, npc_id, text
            )
        return _fact(row)

    async def clear(self, session_id: str, key: str | None = None) -> list[str]:
        """Remove one fact, or (key None) every fact of the session; returns the keys gone."""
        with driver_errors(f"clear session facts of session {session_id!r}"):
            rows = await self._pool.fetch(CLEAR_FACTS, self.campaign_id, session_id, key)
        return sorted(row["key"] for row in rows)

    async def of_session(self, session_id: str) -> list[SessionFact]:
        with driver_errors(f"read the session facts of session {session_id!r}"):
            rows = await self._pool.fetch(SELECT_FACTS, self.campaign_id, session_id)
        return [_fact(row) for row in rows]

    async def shown_to(self, session_id: str, npc_id: str | None) -> Sequence[SessionFact]:
        """The facts `npc_id`'s hot context shows (None: the DM's, every fact)."""
        with driver_errors(f"read the session facts of session {session_id!r}"):
            rows = await self._pool.fetch(SELECT_FACTS_FOR, self.campaign_id, session_id, npc_id)
        return [_fact(row) for row in rows]
