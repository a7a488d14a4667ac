"""Which sessions are being recorded into now, seen from any process.

A recorder holds a lease while lines arrive: a shared advisory lock on the session and one
on its campaign, on a connection of its own (`recording_lease`). The lease lives as long as
the recorder's live work for the session does (the live indexer: from a line until the
session ends or ten minutes pass without one; `record` for its whole run), and ends with
that connection, so a recorder that dies leaves nothing behind.

Deleting what a recorder writes into (the session, a line of it, its campaign) takes the
same keys exclusively for its transaction without waiting (`refuse_while_recording`): a
held lease refuses the deletion, and a recorder starting meanwhile waits for the deletion
to commit (and then finds its session gone).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.errors import ConflictError

# Session ids hold no spaces, so a campaign's key ('' as the session) is never a session's.
LEASE_KEY = "hashtextextended('glyphoxa recording ' || {campaign} || ' ' || {session}, 0)"
HOLD_LEASE = (
    f"SELECT pg_advisory_lock_shared({LEASE_KEY.format(campaign='$1', session=repr(''))}), "
    f"pg_advisory_lock_shared({LEASE_KEY.format(campaign='$1', session='$2')})"
)
TRY_SESSION = f"SELECT pg_try_advisory_xact_lock({LEASE_KEY.format(campaign='$1', session='$2')})"
TRY_CAMPAIGN = (
    f"SELECT pg_try_advisory_xact_lock({LEASE_KEY.format(campaign='$1', session=repr(''))})"
)
# The sessions whose lease is held, taking the others' keys on the way.
SELECT_RECORDED = f"""
SELECT s.id FROM sessions s
WHERE s.campaign_id = $1
  AND NOT pg_try_advisory_xact_lock({LEASE_KEY.format(campaign="s.campaign_id", session="s.id")})
ORDER BY s.id
"""
CLOSE_TIMEOUT_S = 5.0


@contextlib.asynccontextmanager
async def recording_lease(db: Database, campaign_id: str, session_id: str) -> AsyncIterator[None]:
    """Hold the session's lease for the block: deleting it, a line of it or its campaign is
    refused meanwhile. Waits while such a deletion is being made."""
    with driver_errors(f"mark session {session_id!r} as being recorded"):
        conn = await asyncpg.connect(db.location.dsn)
        try:
            await conn.execute(HOLD_LEASE, campaign_id, session_id)
        except BaseException:
            conn.terminate()
            raise
    try:
        yield
    finally:
        # Closing releases the locks; shielded, so a cancelled recorder still says goodbye.
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT_S):
            try:
                await conn.close()
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                conn.terminate()
        if not conn.is_closed():
            conn.terminate()


async def refuse_while_recording(
    conn: asyncpg.Connection, campaign_id: str, session_id: str | None = None
) -> None:
    """ConflictError when a recorder holds the lease of the session (None: of any session of
    the campaign). Run it in the deleting transaction: the keys are held until it ends."""
    if session_id is not None:
        if not await conn.fetchval(TRY_SESSION, campaign_id, session_id):
            raise ConflictError(
                f"Session {session_id!r} of campaign {campaign_id!r} is being recorded into; "
                "nothing was deleted. Stop the recording first (end the `record` command, or "
                "call session.end on the recorder endpoint), then try again."
            )
        return
    if await conn.fetchval(TRY_CAMPAIGN, campaign_id):
        return
    recorded = [row["id"] for row in await conn.fetch(SELECT_RECORDED, campaign_id)]
    which = f"session {', '.join(map(repr, recorded))}" if recorded else "a new session"
    raise ConflictError(
        f"Campaign {campaign_id!r} is being recorded into ({which}); nothing was deleted. "
        "Stop the recording first (end the `record` command, or call session.end on the "
        "recorder endpoint), then try again."
    )
