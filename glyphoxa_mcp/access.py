"""What a bearer token lets its holder read. (pure)

A token grants one viewer of one campaign (an NPC, the DM, or a recorder; `domain.viewer`)
up to a tier. Its text is `gxm_<id>_<secret>`: the id finds the stored row, the secret is
compared with the stored SHA-256 in constant time, so neither the database lookup nor the
comparison tells an attacker how much of a guess was right.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.viewer import Viewer

TOKEN_PREFIX = "gxm"
TOKEN_ID_BYTES = 6
TOKEN_SECRET_BYTES = 32
_TOKEN = re.compile(rf"^{TOKEN_PREFIX}_([0-9a-f]{{{2 * TOKEN_ID_BYTES}}})_([A-Za-z0-9_-]{{43}})$")
TIER_ORDER = (Tier.FAST, Tier.STANDARD, Tier.DEEP)
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """Whether a bind address or host name is this machine's own loopback."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class Grant(BaseModel):
    """A stored token, without its secret."""

    model_config = ConfigDict(frozen=True)

    id: str
    viewer: Viewer
    max_tier: Tier | None = Field(default=None, description="None: every tier.")
    label: str | None = None
    created_at: datetime
    expires_at: datetime | None = None
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None

    def refusal(self, now: datetime) -> str | None:
        """Why this token cannot be used at all now, or None."""
        if self.revoked_at is not None:
            return "the token was revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "the token has expired"
        return None

    def forbids(self, viewer: Viewer, tier: Tier | None) -> str | None:
        """Why this token may not read as `viewer` at `tier`, or None when it may."""
        if viewer != self.viewer:
            return f"this token is for {self.viewer.describe()}, not {viewer.describe()}"
        if tier is not None and self.max_tier is not None and rank(tier) > rank(self.max_tier):
            return f"this token allows tiers up to {self.max_tier.value}, not {tier.value}"
        return None


class NewToken(BaseModel):
    """A token as created: the only time its text exists outside the client."""

    model_config = ConfigDict(frozen=True)

    id: str
    token: str
    secret_sha256: bytes


def rank(tier: Tier) -> int:
    return TIER_ORDER.index(tier)


def new_token() -> NewToken:
    token_id = secrets.token_hex(TOKEN_ID_BYTES)
    secret = secrets.token_urlsafe(TOKEN_SECRET_BYTES)
    return NewToken(
        id=token_id, token=f"{TOKEN_PREFIX}_{token_id}_{secret}", secret_sha256=digest(secret)
    )


def digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def split_token(text: str) -> tuple[str, str] | None:
    """The id and secret of a well-formed token, or None."""
    match = _TOKEN.match(text)
    return (match.group(1), match.group(2)) if match else None


def secret_matches(secret: str, stored_sha256: bytes) -> bool:
    return hmac.compare_digest(digest(secret), stored_sha256)


def bearer(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer …` header, or None."""
    if authorization is None:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()
