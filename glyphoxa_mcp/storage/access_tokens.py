"""Bearer tokens as stored: a hash of each secret, never the secret itself."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from glyphoxa_mcp.access import Grant, NewToken, new_token
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.viewer import Viewer, ViewerKind
from glyphoxa_mcp.errors import NotFoundError

GRANT_COLUMNS = (
    "campaign_id, id, viewer, npc_id, max_tier, label, created_at, expires_at, last_used_at, "
    "revoked_at"
)
INSERT_TOKEN = f"""
INSERT INTO access_tokens
    (campaign_id, id, viewer, npc_id, max_tier, label, secret_sha256, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING {GRANT_COLUMNS}
"""
# By id alone: a token names its campaign, so the gate can tell another campaign's token
# (403) from an unknown one (401), and the desk's sign-in needs no campaign typed in.
SELECT_FOR_REQUEST = f"""
SELECT {GRANT_COLUMNS}, secret_sha256 FROM access_tokens WHERE id = $1 ORDER BY campaign_id
"""
SELECT_TOKENS = f"""
SELECT {GRANT_COLUMNS} FROM access_tokens
WHERE $1::text IS NULL OR campaign_id = $1
ORDER BY campaign_id, created_at, id
"""
REVOKE_TOKEN = f"""
UPDATE access_tokens SET revoked_at = coalesce(revoked_at, now())
WHERE id = $1
RETURNING {GRANT_COLUMNS}
"""
# A busy token would otherwise write a row on every request.
TOUCH_TOKEN = """
UPDATE access_tokens SET last_used_at = now()
WHERE campaign_id = $1 AND id = $2
  AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
"""


def _grant(row: asyncpg.Record) -> Grant:
    viewer = Viewer(
        campaign=row["campaign_id"], kind=ViewerKind(row["viewer"]), npc_id=row["npc_id"]
    )
    return Grant(
        id=row["id"],
        viewer=viewer,
        max_tier=Tier(row["max_tier"]) if row["max_tier"] else None,
        label=row["label"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        last_used_at=row["last_used_at"],
        revoked_at=row["revoked_at"],
    )


class AccessTokens:
    """Every campaign's tokens in one database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._pool = db.pool

    async def create(
        self,
        viewer: Viewer,
        max_tier: Tier | None = None,
        label: str | None = None,
        expires_at: datetime | None = None,
    ) -> tuple[Grant, NewToken]:
        token = new_token()
        with driver_errors(f"create a token for {viewer.describe()}"):
            row = await self._pool.fetchrow(
                INSERT_TOKEN,
                viewer.campaign,
                token.id,
                viewer.kind.value,
                viewer.npc_id,
                max_tier.value if max_tier else None,
                label,
                token.secret_sha256,
                expires_at,
            )
        return _grant(row), token

    async def for_request(self, token_id: str) -> list[tuple[Grant, bytes]]:
        """The grant and stored secret hash of each token with id `token_id`, of any
        campaign: none or one (ids are random), unless two campaigns drew the same id."""
        with driver_errors("check a token"):
            rows = await self._pool.fetch(SELECT_FOR_REQUEST, token_id)
        return [(_grant(row), bytes(row["secret_sha256"])) for row in rows]

    async def touch(self, grant: Grant) -> None:
        with driver_errors("record a token's use"):
            await self._pool.execute(TOUCH_TOKEN, grant.viewer.campaign, grant.id)

    async def list(self, campaign: str | None = None) -> list[Grant]:
        with driver_errors("list tokens"):
            rows = await self._pool.fetch(SELECT_TOKENS, campaign)
        return [_grant(row) for row in rows]

    async def revoke(self, token_id: str) -> Grant:
        with driver_errors(f"revoke token {token_id!r}"):
            row = await self._pool.fetchrow(REVOKE_TOKEN, token_id)
        if row is None:
            raise NotFoundError(
                f"No token {token_id!r}. `glyphoxa-mcp token list` shows the tokens' ids."
            )
        return _grant(row)
