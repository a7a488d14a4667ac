"""Campaigns and their sessions: the scope every other row hangs from."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Literal

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.knowledge import Knowledge, checked_news_hops, checked_news_types
from glyphoxa_mcp.domain.models import Campaign, NewSession, Session, build
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError

CAMPAIGN_COLUMNS = "id, name, created_at, review_threshold, knowledge, news_hops, news_types"
UPSERT_CAMPAIGN = f"""
INSERT INTO campaigns (id, name) VALUES ($1, $2)
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name
RETURNING {CAMPAIGN_COLUMNS}
"""
SELECT_CAMPAIGN = f"SELECT {CAMPAIGN_COLUMNS} FROM campaigns WHERE id = $1"
SELECT_CAMPAIGNS = f"SELECT {CAMPAIGN_COLUMNS} FROM campaigns ORDER BY id"
SET_REVIEW_THRESHOLD = f"""
UPDATE campaigns SET review_threshold = $2 WHERE id = $1 RETURNING {CAMPAIGN_COLUMNS}
"""
# Each setting given (not NULL) replaces the campaign's; triggers hear its sessions again
# when `knowledge` changes (sql/032).
CONFIGURE_KNOWLEDGE = f"""
UPDATE campaigns SET knowledge = coalesce($2, knowledge), news_hops = coalesce($3, news_hops),
                     news_types = coalesce($4, news_types)
WHERE id = $1 RETURNING {CAMPAIGN_COLUMNS}
"""
DELETE_CAMPAIGN = "DELETE FROM campaigns WHERE id = $1"

SESSION_COLUMNS = (
    "campaign_id, id, title, started_at, ended_at, summary, summary_source, llm_pending, dm_only"
)
_UPSERT_SESSION = """
INSERT INTO sessions (campaign_id, id, title, started_at, ended_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (campaign_id, id) DO UPDATE SET
    title = coalesce(EXCLUDED.title, sessions.title),
    -- A session starts at its earliest known moment (re-ingesting must not move it).
    started_at = least(EXCLUDED.started_at, sessions.started_at),
    ended_at = coalesce(EXCLUDED.ended_at, sessions.ended_at)
"""
UPSERT_SESSION = f"{_UPSERT_SESSION}RETURNING {SESSION_COLUMNS}"
# A row this statement inserted has no transaction that replaced it (xmax 0); one the
# conflict updated has.
OPEN_SESSION = f"{_UPSERT_SESSION}RETURNING xmax = 0 AS created"
SELECT_SESSION = f"SELECT {SESSION_COLUMNS} FROM sessions WHERE campaign_id = $1 AND id = $2"
# A session one viewer may read: not among those withheld from it ($3), nor DM-only for an
# NPC ($4). Any other session is no row, as one that does not exist.
SELECT_READABLE_SESSION = f"""
SELECT {SESSION_COLUMNS} FROM sessions
WHERE campaign_id = $1 AND id = $2 AND id <> ALL($3::text[]) AND NOT ($4 AND dm_only)
"""
SELECT_SESSIONS = f"""
SELECT {SESSION_COLUMNS} FROM sessions WHERE campaign_id = $1
ORDER BY coalesce(started_at, created_at), id
"""
# sessions_ago=1 is the most recently finished session.
SELECT_FINISHED_SESSION = f"""
SELECT {SESSION_COLUMNS} FROM sessions
WHERE campaign_id = $1 AND ended_at IS NOT NULL AND id <> ALL($3::text[])
ORDER BY ended_at DESC, id DESC
OFFSET $2 LIMIT 1
"""
END_SESSION = f"""
UPDATE sessions SET ended_at = $3
WHERE campaign_id = $1 AND id = $2
RETURNING {SESSION_COLUMNS}
"""
SET_SUMMARY = f"""
UPDATE sessions SET summary = $3, summary_source = $4, llm_pending = $5
WHERE campaign_id = $1 AND id = $2
RETURNING {SESSION_COLUMNS}
"""
SELECT_DM_ONLY_BY_ID = """
SELECT id, dm_only FROM sessions WHERE campaign_id = $1
ORDER BY coalesce(started_at, created_at), id
"""
SET_SESSION_DM_ONLY = f"""
UPDATE sessions SET dm_only = $3
WHERE campaign_id = $1 AND id = $2
RETURNING {SESSION_COLUMNS}
"""
RESET_SESSION_CHUNKS_DM_ONLY = """
UPDATE chunks c SET dm_only = glyphoxa_chunk_dm_only(c.campaign_id, c.session_id, c.entry_ids)
WHERE c.campaign_id = $1 AND c.session_id = $2
"""
SELECT_LLM_PENDING = f"""
SELECT {SESSION_COLUMNS} FROM sessions WHERE campaign_id = $1 AND llm_pending ORDER BY id
"""


def _campaign(row: asyncpg.Record) -> Campaign:
    return Campaign(**{**dict(row), "news_types": tuple(row["news_types"])})


def _session(row: asyncpg.Record) -> Session:
    return Session(**dict(row))


class Campaigns:
    """All campaigns of one database."""

    def __init__(self, db: Database) -> None:
        self._pool = db.pool

    async def ensure(self, campaign_id: str, name: str | None = None) -> Campaign:
        """Create the campaign, or rename it when a name is given."""
        campaign = build(Campaign, id=campaign_id, name=name or campaign_id)
        with driver_errors(f"create campaign {campaign_id!r}"):
            if name is None:
                row = await self._pool.fetchrow(SELECT_CAMPAIGN, campaign.id)
                if row is not None:
                    return _campaign(row)
            row = await self._pool.fetchrow(UPSERT_CAMPAIGN, campaign.id, campaign.name)
        assert row is not None, "an upsert returns its row"
        return _campaign(row)

    async def get(self, campaign_id: str) -> Campaign:
        with driver_errors(f"read campaign {campaign_id!r}"):
            row = await self._pool.fetchrow(SELECT_CAMPAIGN, campaign_id)
        if row is None:
            raise NotFoundError(
                f"No campaign {campaign_id!r}. `glyphoxa-mcp status` lists the campaigns."
            )
        return _campaign(row)

    async def set_review_threshold(self, campaign_id: str, threshold: float) -> Campaign:
        if not 0 <= threshold <= 1:
            raise InvalidInputError(
                "The review threshold is a confidence from 0 to 1.", field="review_threshold"
            )
        with driver_errors(f"set campaign {campaign_id!r}'s review threshold"):
            row = await self._pool.fetchrow(SET_REVIEW_THRESHOLD, campaign_id, threshold)
        if row is None:
            await self.get(campaign_id)  # says which campaign is missing, and how to find one
            raise AssertionError("unreachable: get raises for a missing campaign")
        return _campaign(row)

    async def configure_knowledge(
        self,
        campaign_id: str,
        *,
        knowledge: Knowledge | None = None,
        news_hops: int | None = None,
        news_types: Sequence[str] | None = None,
    ) -> Campaign:
        """Change who knows what (domain/knowledge.py): a setting left None is kept."""
        hops = None if news_hops is None else checked_news_hops(news_hops)
        types = None if news_types is None else list(checked_news_types(list(news_types)))
        with driver_errors(f"set campaign {campaign_id!r}'s knowledge"):
            row = await self._pool.fetchrow(
                CONFIGURE_KNOWLEDGE, campaign_id, knowledge, hops, types
            )
        if row is None:
            await self.get(campaign_id)
            raise AssertionError("unreachable: get raises for a missing campaign")
        return _campaign(row)

    async def list(self) -> list[Campaign]:
        with driver_errors("list campaigns"):
            rows = await self._pool.fetch(SELECT_CAMPAIGNS)
        return [_campaign(row) for row in rows]

    async def delete(self, campaign_id: str) -> bool:
        """Delete a campaign and everything stored for it."""
        with driver_errors(f"delete campaign {campaign_id!r}"):
            status = await self._pool.execute(DELETE_CAMPAIGN, campaign_id)
        return status.endswith(" 1")


class Sessions:
    """The sessions (game nights) of one campaign."""

    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def upsert(self, session: NewSession) -> Session:
        """Create the session, or fill in the fields given; existing values are kept otherwise,
        and the start only ever moves earlier."""
        with driver_errors(f"store session {session.id!r}"):
            row = await self._pool.fetchrow(
                UPSERT_SESSION,
                self.campaign_id,
                session.id,
                session.title,
                session.started_at,
                session.ended_at,
            )
        return _session(row)

    async def open(self, session: NewSession) -> bool:
        """Like `upsert`; whether the session was created, and nothing of what it holds (for a
        writer that may read nothing, such as a recorder)."""
        with driver_errors(f"store session {session.id!r}"):
            created: bool = await self._pool.fetchval(
                OPEN_SESSION,
                self.campaign_id,
                session.id,
                session.title,
                session.started_at,
                session.ended_at,
            )
        return created

    async def get(self, session_id: str) -> Session:
        with driver_errors(f"read session {session_id!r}"):
            row = await self._pool.fetchrow(SELECT_SESSION, self.campaign_id, session_id)
        if row is None:
            raise NotFoundError(self._unknown(session_id))
        return _session(row)

    async def readable(
        self, session_id: str, withheld: Collection[str], *, npc: bool
    ) -> Session | None:
        """The session if a viewer may read it: not `withheld` from it, nor DM-only when the
        viewer is an NPC. None otherwise, after the same statement as for a session that does
        not exist, so that neither the answer nor its time tells a withheld one from none."""
        with driver_errors(f"read session {session_id!r}"):
            row = await self._pool.fetchrow(
                SELECT_READABLE_SESSION, self.campaign_id, session_id, list(withheld), npc
            )
        return None if row is None else _session(row)

    async def waiting_for_llm(self) -> list[Session]:
        """Sessions ended while the LLM was unreachable."""
        with driver_errors("list sessions waiting for the LLM"):
            rows = await self._pool.fetch(SELECT_LLM_PENDING, self.campaign_id)
        return [_session(row) for row in rows]

    async def list(self) -> list[Session]:
        with driver_errors("list sessions"):
            rows = await self._pool.fetch(SELECT_SESSIONS, self.campaign_id)
        return [_session(row) for row in rows]

    async def dm_only_by_id(self) -> dict[str, bool]:
        """Every session's id, oldest first, and whether it is DM-only: what a viewer's read
        needs to know of the sessions, without their summaries."""
        with driver_errors("list sessions"):
            rows = await self._pool.fetch(SELECT_DM_ONLY_BY_ID, self.campaign_id)
        return {row["id"]: row["dm_only"] for row in rows}

    async def titles(self, session_ids: Collection[str]) -> dict[str, str | None]:
        """The titles of these sessions (None: untitled), by id; unknown ids are left out."""
        with driver_errors("read session titles"):
            rows = await self._pool.fetch(
                "SELECT id, title FROM sessions WHERE campaign_id = $1 AND id = ANY($2::text[])",
                self.campaign_id,
                list(session_ids),
            )
        return {row["id"]: row["title"] for row in rows}

    async def finished(self, sessions_ago: int = 1, skipping: Collection[str] = ()) -> Session:
        """The finished session `sessions_ago` back (1 is the last one), counting only those
        not in `skipping`."""
        if sessions_ago < 1:
            raise InvalidInputError(
                f"sessions_ago must be 1 or more (1 is the last finished session); "
                f"got {sessions_ago}.",
                field="sessions_ago",
            )
        with driver_errors("find a finished session"):
            row = await self._pool.fetchrow(
                SELECT_FINISHED_SESSION, self.campaign_id, sessions_ago - 1, list(skipping)
            )
        if row is None:
            had = (
                "no finished session"
                if sessions_ago == 1
                else f"fewer than {counted(sessions_ago, 'finished session')}"
            )
            raise NotFoundError(f"Campaign {self.campaign_id!r} has {had}.")
        return _session(row)

    async def end(self, session_id: str, ended_at: datetime) -> Session:
        with driver_errors(f"end session {session_id!r}"):
            row = await self._pool.fetchrow(END_SESSION, self.campaign_id, session_id, ended_at)
        if row is None:
            raise NotFoundError(self._unknown(session_id))
        return _session(row)

    async def set_summary(
        self,
        session_id: str,
        summary: str,
        source: Literal["llm", "extractive", "dm"],
        *,
        llm_pending: bool = False,
    ) -> Session:
        """`llm_pending`: the LLM could not write it; a later `--retry-llm` should."""
        with driver_errors(f"store the summary of session {session_id!r}"):
            row = await self._pool.fetchrow(
                SET_SUMMARY, self.campaign_id, session_id, summary, source, llm_pending
            )
        if row is None:
            raise NotFoundError(self._unknown(session_id))
        return _session(row)

    async def set_dm_only(self, session_id: str, dm_only: bool) -> Session:
        """Make the session DM-only (or not), with its passages, in one transaction."""
        with driver_errors(f"mark session {session_id!r} DM-only"):
            async with self._pool.acquire() as conn, conn.transaction():
                row = await conn.fetchrow(
                    SET_SESSION_DM_ONLY, self.campaign_id, session_id, dm_only
                )
                if row is None:
                    raise NotFoundError(self._unknown(session_id))
                await conn.execute(RESET_SESSION_CHUNKS_DM_ONLY, self.campaign_id, session_id)
        return _session(row)

    def _unknown(self, session_id: str) -> str:
        return (
            f"No session {session_id!r} in campaign {self.campaign_id!r}. "
            "List the sessions to find valid ids."
        )
