"""Deleting a campaign, a session, or one line of a transcript, leaving no trace.

Each deletion is one transaction and refuses while a recorder is writing into what it
would delete (storage/recording_leases.py). What is derived from the deleted rows goes with
them: word postings and statistics, row counts (their triggers, sql/010, sql/024), the
passages that held a line, the entities each session's passages tag. Servers that cached
something of a deleted campaign see its counters move (sql/026 starts a reused id's counters
past the old ones), and hot-context subscribers hear of removed lines (sql/026).

- A campaign: everything stored for it, in every table the catalog lists with a
  `campaign_id` column (so also a table added later without a cascading foreign key), and
  its version counters and entity change log. Its branches are refused by default; deleted
  with it on request, or kept as campaigns of their own (detached: nothing names the
  deleted campaign any more). Its access tokens go with it.
- A session: its lines, passages, summary, episode (and the passages' tags of it), session
  facts and the review queue's proposals from it. What was learned in it (facts and
  relationships whose provenance names it) is deleted, unless the DM decided it (stated,
  imported or confirmed it): that stays, no longer linked to the session. A fact deleted
  takes the versions it replaced with it. The entity change log of the campaign is emptied
  when an episode goes, so servers read the entities again instead of patching (the log
  would name the session).
- A line (`remove_line`; `pipeline.forget` rebuilds what is made from it): the line, and
  the passages that held it (cut again from the lines left by the caller). Facts and
  relationships extracted from it stay, no longer citing it (their foreign key, sql/029).
  The summary is flagged for review: summaries we wrote are written again from the lines
  left (pipeline/forget.py), the DM's own are left to the DM.
"""

from __future__ import annotations

import asyncpg
from pydantic import BaseModel, ConfigDict

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.episodes import episode_id
from glyphoxa_mcp.domain.reports import (
    BranchPolicy,
    CampaignDeleted,
    CampaignSize,
    SessionDeleted,
)
from glyphoxa_mcp.errors import ConflictError, NotFoundError
from glyphoxa_mcp.storage.branches import descendants
from glyphoxa_mcp.storage.knowledge_graph import DM_DECIDED
from glyphoxa_mcp.storage.names_read_cache import FORGET_CAMPAIGN_NAMES_READ
from glyphoxa_mcp.storage.recording_leases import refuse_while_recording
from glyphoxa_mcp.storage.semantic_index import FORGET_SESSION_ENTITIES, TALLY_SESSION_ENTITIES

SELECT_CAMPAIGN = "SELECT id FROM campaigns WHERE id = $1 FOR UPDATE"
SELECT_CHILDREN = "SELECT id FROM campaigns WHERE forked_from = $1 ORDER BY id"
COUNT_CAMPAIGNS = """
SELECT (SELECT count(*) FROM sessions WHERE campaign_id = ANY($1::text[])) AS sessions,
       (SELECT count(*) FROM session_entries WHERE campaign_id = ANY($1::text[])) AS lines,
       (SELECT count(*) FROM entities WHERE campaign_id = ANY($1::text[])) AS entities
"""
DELETE_CAMPAIGNS = "DELETE FROM campaigns WHERE id = ANY($1::text[])"
# Every table with these columns (of the public schema's own tables).
SELECT_TABLES_WITH = """
SELECT c.relname::text AS table_name FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
  AND (SELECT count(*) FROM pg_attribute a
       WHERE a.attrelid = c.oid AND a.attname = ANY($1::text[]) AND NOT a.attisdropped)
      = cardinality($1::text[])
ORDER BY c.relname
"""

SELECT_SESSION = "SELECT id FROM sessions WHERE campaign_id = $1 AND id = $2 FOR UPDATE"
COUNT_SESSION = """
SELECT (SELECT count(*) FROM session_entries WHERE campaign_id = $1 AND session_id = $2) AS lines,
       (SELECT count(*) FROM chunks WHERE campaign_id = $1 AND session_id = $2) AS passages
"""
LEARNED_FACT = "(f.session_id = $2 OR f.provenance ->> 'session_id' = $2)"
# What the pipeline learned in the session and the DM never decided, with the versions each
# replaced (they point at it).
DELETE_LEARNED_FACTS = f"""
WITH RECURSIVE doomed AS (
    SELECT f.id FROM facts f
    WHERE f.campaign_id = $1 AND {LEARNED_FACT} AND NOT {DM_DECIDED.format(alias="f")}
    UNION
    SELECT older.id FROM facts older JOIN doomed ON older.superseded_by = doomed.id
    WHERE older.campaign_id = $1
)
DELETE FROM facts f USING doomed WHERE f.campaign_id = $1 AND f.id = doomed.id
"""
UNLINK_LEARNED_FACTS = f"""
UPDATE facts f
SET session_id = NULL, provenance = jsonb_set(f.provenance, '{{session_id}}', 'null'),
    updated_at = now()
WHERE f.campaign_id = $1 AND {LEARNED_FACT}
"""
DELETE_LEARNED_RELATIONSHIPS = f"""
DELETE FROM relationships r
WHERE r.campaign_id = $1 AND r.provenance ->> 'session_id' = $2
  AND NOT {DM_DECIDED.format(alias="r")}
"""
UNLINK_LEARNED_RELATIONSHIPS = """
UPDATE relationships r
SET provenance = jsonb_set(r.provenance, '{session_id}', 'null'), updated_at = now()
WHERE r.campaign_id = $1 AND r.provenance ->> 'session_id' = $2
"""
DELETE_EPISODE = """
DELETE FROM entities
WHERE campaign_id = $1 AND id = $3 AND type = 'event' AND attributes ->> 'session_id' = $2
"""
UNTAG_EPISODE = """
UPDATE chunks SET entity_ids = array_remove(entity_ids, $2)
WHERE campaign_id = $1 AND entity_ids @> ARRAY[$2]
"""
FORGET_EPISODE_COUNTS = (
    "DELETE FROM session_chunk_entities WHERE campaign_id = $1 AND entity_id = $2"
)
EMPTY_CHANGE_LOG = "DELETE FROM entity_changes WHERE campaign_id = $1"
# A proposal's reference is 'SESSION:ENTITY'; session ids may hold ':' too, so the session
# is the longest one that prefixes it.
DELETE_PROPOSALS = """
DELETE FROM pending_entities x
WHERE x.campaign_id = $1 AND x.source = 'session'
  AND (SELECT s.id FROM sessions s
       WHERE s.campaign_id = $1 AND starts_with(x.source_ref, s.id || ':')
       ORDER BY length(s.id) DESC LIMIT 1) = $2
"""
DELETE_SESSION = "DELETE FROM sessions WHERE campaign_id = $1 AND id = $2"

SELECT_LINE = """
SELECT session_id FROM session_entries WHERE campaign_id = $1 AND id = $2 FOR UPDATE
"""
DELETE_LINE_PASSAGES = """
DELETE FROM chunks WHERE campaign_id = $1 AND session_id = $2 AND $3::bigint = ANY(entry_ids)
"""
DELETE_LINE = "DELETE FROM session_entries WHERE campaign_id = $1 AND id = $2"

# After the summary is written (which clears the flag, sql/026).
FLAG_SUMMARY = """
UPDATE sessions SET summary_needs_review = true
WHERE campaign_id = $1 AND id = $2 AND summary IS NOT NULL
"""
CLEAR_SUMMARY_FLAG = """
UPDATE sessions SET summary_needs_review = false WHERE campaign_id = $1 AND id = $2
"""
SELECT_FLAGGED = """
SELECT id FROM sessions WHERE campaign_id = $1 AND summary_needs_review
ORDER BY coalesce(started_at, created_at), id
"""


class LineRemoved(BaseModel):
    model_config = ConfigDict(frozen=True)

    campaign_id: str
    entry_id: int
    session_id: str
    passages_removed: int


def _count(status: str) -> int:
    return int(status.split()[-1])


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


async def _tables_with(conn: asyncpg.Connection, *columns: str) -> list[str]:
    return [row["table_name"] for row in await conn.fetch(SELECT_TABLES_WITH, list(columns))]


def _unknown_campaign(campaign_id: str) -> NotFoundError:
    return NotFoundError(f"No campaign {campaign_id!r}. `glyphoxa-mcp status` lists the campaigns.")


async def campaign_size(db: Database, campaign_id: str) -> CampaignSize:
    with driver_errors(f"read campaign {campaign_id!r}"):
        async with db.pool.acquire() as conn:
            if await conn.fetchval("SELECT id FROM campaigns WHERE id = $1", campaign_id) is None:
                raise _unknown_campaign(campaign_id)
            counts = await conn.fetchrow(COUNT_CAMPAIGNS, [campaign_id])
            branches = await descendants(conn, campaign_id)
    assert counts is not None, "an aggregate returns a row"
    return CampaignSize(campaign_id=campaign_id, branches=tuple(branches), **dict(counts))


async def delete_campaign(
    db: Database, campaign_id: str, branches: BranchPolicy = "refuse"
) -> CampaignDeleted:
    """Delete the campaign and everything stored for it. Its branches: `refuse` (a
    ConflictError while it has any), `delete` them with it, or `keep` them (detached)."""
    with driver_errors(f"delete campaign {campaign_id!r}"):
        async with db.pool.acquire() as conn, conn.transaction():
            if await conn.fetchval(SELECT_CAMPAIGN, campaign_id) is None:
                raise _unknown_campaign(campaign_id)
            below = await descendants(conn, campaign_id)
            if below and branches == "refuse":
                raise ConflictError(
                    f"Campaign {campaign_id!r} has branches ({', '.join(below)}); nothing was "
                    "deleted. Delete them with it (--with-branches) or keep them as campaigns "
                    "of their own (--keep-branches)."
                )
            doomed = [campaign_id, *below] if branches == "delete" else [campaign_id]
            for campaign in doomed:
                await refuse_while_recording(conn, campaign)
            kept = [] if branches == "delete" else await conn.fetch(SELECT_CHILDREN, campaign_id)
            counts = await conn.fetchrow(COUNT_CAMPAIGNS, doomed)
            await conn.execute(DELETE_CAMPAIGNS, doomed)
            # What no foreign key cascades to: counters, the change log, any table added
            # later without one.
            for table in await _tables_with(conn, "campaign_id"):
                await conn.execute(
                    f"DELETE FROM {_quoted(table)} WHERE campaign_id = ANY($1::text[])", doomed
                )
    assert counts is not None, "an aggregate returns a row"
    return CampaignDeleted(
        campaign_id=campaign_id,
        branches_deleted=tuple(doomed[1:]),
        branches_kept=tuple(row["id"] for row in kept),
        **dict(counts),
    )


async def delete_session(db: Database, campaign_id: str, session_id: str) -> SessionDeleted:
    """Delete the session and what it taught that the DM never decided; see the module."""
    episode = episode_id(session_id)
    with driver_errors(f"delete session {session_id!r}"):
        async with db.pool.acquire() as conn, conn.transaction():
            if await conn.fetchval(SELECT_SESSION, campaign_id, session_id) is None:
                raise NotFoundError(
                    f"No session {session_id!r} in campaign {campaign_id!r}. "
                    "`glyphoxa-mcp session list` lists them."
                )
            await refuse_while_recording(conn, campaign_id, session_id)
            size = await conn.fetchrow(COUNT_SESSION, campaign_id, session_id)
            assert size is not None, "an aggregate returns a row"
            learned = (campaign_id, session_id)
            facts_deleted = _count(await conn.execute(DELETE_LEARNED_FACTS, *learned))
            facts_kept = _count(await conn.execute(UNLINK_LEARNED_FACTS, *learned))
            relationships_deleted = _count(
                await conn.execute(DELETE_LEARNED_RELATIONSHIPS, *learned)
            )
            relationships_kept = _count(await conn.execute(UNLINK_LEARNED_RELATIONSHIPS, *learned))
            episode_deleted = _count(await conn.execute(DELETE_EPISODE, *learned, episode)) > 0
            if episode_deleted:
                await conn.execute(UNTAG_EPISODE, campaign_id, episode)
                await conn.execute(FORGET_EPISODE_COUNTS, campaign_id, episode)
                await conn.execute(EMPTY_CHANGE_LOG, campaign_id)
            proposals = _count(await conn.execute(DELETE_PROPOSALS, *learned))
            await conn.execute(DELETE_SESSION, *learned)
            await conn.execute(FORGET_CAMPAIGN_NAMES_READ, campaign_id)
            # Rows of any table added later that name the session without a cascade.
            for table in await _tables_with(conn, "campaign_id", "session_id"):
                await conn.execute(
                    f"DELETE FROM {_quoted(table)} WHERE campaign_id = $1 AND session_id = $2",
                    *learned,
                )
    return SessionDeleted(
        campaign_id=campaign_id,
        session_id=session_id,
        lines=size["lines"],
        passages=size["passages"],
        facts_deleted=facts_deleted,
        relationships_deleted=relationships_deleted,
        facts_kept=facts_kept,
        relationships_kept=relationships_kept,
        episode_deleted=episode_deleted,
        proposals_deleted=proposals,
    )


async def remove_line(db: Database, campaign_id: str, entry_id: int) -> LineRemoved:
    """Delete one line of a transcript and the passages that held it (`pipeline.forget`
    cuts them again from the lines left, and writes the summary again)."""
    with driver_errors(f"forget line:{entry_id}"):
        async with db.pool.acquire() as conn, conn.transaction():
            session_id = await conn.fetchval(SELECT_LINE, campaign_id, entry_id)
            if session_id is None:
                raise NotFoundError(
                    f"No line line:{entry_id} in campaign {campaign_id!r}. `glyphoxa-mcp "
                    "session show SESSION` lists the lines with their ids."
                )
            await refuse_while_recording(conn, campaign_id, session_id)
            passages = _count(
                await conn.execute(DELETE_LINE_PASSAGES, campaign_id, session_id, entry_id)
            )
            await conn.execute(DELETE_LINE, campaign_id, entry_id)
            await conn.execute(FORGET_CAMPAIGN_NAMES_READ, campaign_id)
            await conn.execute(FORGET_SESSION_ENTITIES, campaign_id, session_id)
            await conn.execute(TALLY_SESSION_ENTITIES, campaign_id, session_id)
    return LineRemoved(
        campaign_id=campaign_id,
        entry_id=entry_id,
        session_id=session_id,
        passages_removed=passages,
    )


async def flag_summary(db: Database, campaign_id: str, session_id: str) -> bool:
    """Mark the session's summary for the DM's review; False when it has none."""
    with driver_errors(f"flag the summary of session {session_id!r}"):
        return _count(await db.pool.execute(FLAG_SUMMARY, campaign_id, session_id)) > 0


async def clear_summary_flag(db: Database, campaign_id: str, session_id: str) -> None:
    """The DM has looked at the summary."""
    with driver_errors(f"clear the review flag of session {session_id!r}"):
        status = await db.pool.execute(CLEAR_SUMMARY_FLAG, campaign_id, session_id)
    if _count(status) == 0:
        raise NotFoundError(f"No session {session_id!r} in campaign {campaign_id!r}.")


async def summaries_to_review(db: Database, campaign_id: str) -> list[str]:
    """The sessions whose summary waits for review since lines of them were forgotten."""
    with driver_errors("list the summaries to review"):
        rows = await db.pool.fetch(SELECT_FLAGGED, campaign_id)
    return [row["id"] for row in rows]
