"""Bearer tokens at the HTTP door: who may read as which viewer, checked on every request.

A grant read from the database is trusted for at most `RECHECK_S`, so a revocation takes
effect within that on every server process sharing the database, on open streams too: a
request is cancelled when its token stops being valid while it runs. Past `FRESH_S` a grant
still in use is read again in the background, so that requests seldom wait for it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import anyio
from anyio.abc import TaskGroup

from glyphoxa_mcp.access import Grant, bearer, secret_matches, split_token
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.errors import (
    DatabaseUnavailableError,
    DeadlineExceeded,
    GlyphoxaError,
    MemoryUnavailableError,
)
from glyphoxa_mcp.storage.access_tokens import AccessTokens

log = logging.getLogger(__name__)
# A token's grant is used for at most RECHECK_S after it was read (a revocation takes effect
# within it). Past FRESH_S it is read again in the background while it is still used, so a
# request seldom waits for the database at the door: under load that wait was 8 ms at the
# median and 47 at p95, paid by every refusal that happened to come first.
RECHECK_S = 0.5
FRESH_S = RECHECK_S / 2
LOOKUP_DEADLINE_S = 1.0
# `token list` says when a token was last used, to the minute.
TOUCH_EVERY = timedelta(minutes=1)


class Refused(Exception):
    """An HTTP request the gate turns away, with its status and a message for the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class TokenGate:
    """With `tokens` None (`--auth none`), every request reads as the viewer its path names."""

    def __init__(self, tokens: AccessTokens | None) -> None:
        self.tokens = tokens
        self._checked: dict[str, tuple[list[tuple[Grant, bytes]], float]] = {}
        # Where grants are read again ahead of time (`run_in`); without it, a request reads
        # a grant past FRESH_S itself.
        self._tasks: TaskGroup | None = None
        self._refreshing: set[str] = set()

    def run_in(self, tasks: TaskGroup) -> None:
        """Grants are read again ahead of time in `tasks`, which outlives the requests (what
        a reading raises must be contained there)."""
        self._tasks = tasks

    @property
    def required(self) -> bool:
        return self.tokens is not None

    async def identify(self, authorization: str | None) -> Grant:
        """The grant of the bearer token in `authorization`, whichever viewer it is for;
        `Refused` (401) when there is none, it is unknown, or it is revoked or expired."""
        assert self.tokens is not None, "identify a token only when tokens are required"
        text = bearer(authorization)
        if text is None:
            raise Refused(401, "This server needs 'Authorization: Bearer <token>'.")
        parts = split_token(text)
        grant = None
        if parts is not None:
            token_id, secret = parts
            for found, stored in await self._grants(token_id):
                if secret_matches(secret, stored):
                    grant = found
                    break
        if grant is None:
            raise Refused(401, "Unknown token.")
        refusal = grant.refusal(datetime.now(UTC))
        if refusal is not None:
            raise Refused(401, f"Refused: {refusal}.")
        return grant

    async def admit(
        self, authorization: str | None, viewer: Viewer, tier: Tier | None
    ) -> Grant | None:
        """The grant that lets this request read as `viewer` at `tier`; raises `Refused`:
        401 for no valid token, 403 for a valid one that does not grant this viewer (another
        NPC, the DM, another campaign) or tier."""
        if self.tokens is None:
            return None
        grant = await self.identify(authorization)
        forbidden = grant.forbids(viewer, tier)
        if forbidden is not None:
            raise Refused(403, f"Forbidden: {forbidden}.")
        return grant

    async def still_valid(self, grant: Grant) -> bool:
        return any(
            found.viewer.campaign == grant.viewer.campaign
            and found.refusal(datetime.now(UTC)) is None
            for found, _ in await self._grants(grant.id)
        )

    async def while_valid(self, grant: Grant | None, call: Callable[[], Awaitable[None]]) -> None:
        """Run `call`, cancelling it as soon as `grant` is revoked or expires."""
        if grant is None:
            await call()
            return
        async with anyio.create_task_group() as tasks:

            async def watch() -> None:
                while True:
                    await anyio.sleep(RECHECK_S)
                    try:
                        valid = await self.still_valid(grant)
                    except GlyphoxaError:
                        continue  # an outage is not a revocation
                    if not valid:
                        log.info("token %s is no longer valid; closing its request", grant.id)
                        tasks.cancel_scope.cancel()
                        return

            tasks.start_soon(watch)
            await call()
            tasks.cancel_scope.cancel()

    async def tokens_for(self, token_id: str) -> list[tuple[Grant, bytes]]:
        assert self.tokens is not None
        return await self.tokens.for_request(token_id)

    async def _grants(self, token_id: str) -> list[tuple[Grant, bytes]]:
        cached = self._checked.get(token_id)
        if cached is not None:
            age = time.monotonic() - cached[1]
            if age < FRESH_S or (age < RECHECK_S and self._read_ahead(token_id)):
                return cached[0]
        return await self._read(token_id)

    def _read_ahead(self, token_id: str) -> bool:
        """Whether the grants of `token_id` are being read again in the background (started
        now if they were not); False when there is nowhere to do it."""
        if self._tasks is None:
            return False
        if token_id not in self._refreshing:
            self._refreshing.add(token_id)
            self._tasks.start_soon(self._read_again, token_id, name="token grant read ahead")
        return True

    async def _read_again(self, token_id: str) -> None:
        try:
            await self._read(token_id)
        except GlyphoxaError:
            pass  # an outage: the grant read before serves until RECHECK_S, then the door reads
        finally:
            self._refreshing.discard(token_id)

    async def _read(self, token_id: str) -> list[tuple[Grant, bytes]]:
        """The grants of `token_id` from the database, remembered; during an outage, those
        read before it."""
        assert self.tokens is not None
        cached = self._checked.get(token_id)
        now = time.monotonic()
        try:
            found = await self.tokens.db.guard.within(
                LOOKUP_DEADLINE_S, lambda: self.tokens_for(token_id)
            )
        except (DatabaseUnavailableError, DeadlineExceeded):
            if cached is None:
                raise MemoryUnavailableError() from None
            # An outage is not a revocation (and no revocation can be written during one):
            # a token checked before it keeps its grant, so its NPC hears "memory unavailable"
            # from the tools rather than a refusal at the door.
            return cached[0]
        if not found:
            self._checked.pop(token_id, None)
            return found
        self._checked[token_id] = (found, now)
        moment = datetime.now(UTC)
        for grant, _ in found:
            stale = grant.last_used_at is None or moment - grant.last_used_at > TOUCH_EVERY
            if stale and grant.refusal(moment) is None:
                await self.tokens.touch(grant)
        return found
