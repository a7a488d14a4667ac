"""Listen for what other connections changed (see sql/002_change_notifications.sql).

The listener has a connection of its own (LISTEN holds one for as long as it runs). When
that connection is lost (the database restarted, or stopped answering), the feed reconnects
with backoff (1 s doubling to 30 s, at once when `nudge` says the database is back) and then
calls `on_resync`: what changed while it was deaf was never announced, so whoever relies on
the feed must look again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Literal

import anyio
import asyncpg
from pydantic import BaseModel, ValidationError

from glyphoxa_mcp.backoff import Backoff
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.supervision import Supervisor

log = logging.getLogger(__name__)
CHANNEL = "glyphoxa_changes"
# How often the listening connection is checked, and how long the check may take: a
# connection can stop answering without being closed.
LIVENESS_EVERY_S = 10.0
LIVENESS_TIMEOUT_S = 2.0
CONNECT_TIMEOUT_S = 5.0


class Change(BaseModel):
    campaign: str
    kind: Literal["transcript", "graph"]
    session: str | None = None
    table: str | None = None
    # Rows were deleted (a line forgotten, a session or campaign deleted), or an NPC may have
    # stopped hearing a line (sql/034).
    removed: bool = False
    # The NPCs whose hot context the change touches (who was present changed, sql/034);
    # None: every NPC's.
    npcs: list[str] | None = None


ChangeHandler = Callable[[Change], Awaitable[None]]
ResyncHandler = Callable[[], Awaitable[None]]


class ChangeFeed:
    def __init__(self, dsn: str, on_change: ChangeHandler, on_resync: ResyncHandler | None) -> None:
        self.dsn = dsn
        self.on_change = on_change
        self.on_resync = on_resync
        self._send, self._receive = anyio.create_memory_object_stream[Change](max_buffer_size=1000)
        self._lost = anyio.Event()
        self._wake = anyio.Event()
        # The first connection, made before the feed runs.
        self._conn: asyncpg.Connection | None = None

    async def nudge(self) -> None:
        """The database is back: reconnect now rather than at the end of the backoff."""
        self._wake.set()

    def stop(self) -> None:
        self._send.close()

    async def connect(self) -> asyncpg.Connection:
        conn = await asyncpg.connect(self.dsn, timeout=CONNECT_TIMEOUT_S)
        try:
            await conn.add_listener(CHANNEL, self._received)
        except BaseException:
            conn.terminate()
            raise
        self._lost = anyio.Event()
        conn.add_termination_listener(lambda _conn: self._lost.set())
        return conn

    def _received(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        try:
            change = Change.model_validate(json.loads(payload))
        except (ValueError, ValidationError):
            log.warning("ignoring a malformed change notification: %r", payload)
            return
        try:
            self._send.send_nowait(change)
        except anyio.WouldBlock:
            log.warning("change notifications are arriving faster than they are handled")

    async def deliver(self) -> None:
        # The stream stays open when this is started again (under a supervisor).
        async for change in self._receive:
            try:
                await self.on_change(change)
            except Exception:  # one failed delivery must not stop the feed
                log.exception("handling %s failed", change)

    async def keep_connected(self) -> None:
        """Watch the connection; when it is lost, reconnect with backoff, resync, and watch
        again. Started again after an unexpected error, it begins by reconnecting."""
        conn, self._conn = self._conn, None
        try:
            if conn is None:
                conn = await self._reconnect_and_resync(anyio.current_time())
            while True:
                await self._until_lost(conn)
                conn.terminate()
                log.warning("change feed lost its connection; reconnecting")
                conn = await self._reconnect_and_resync(anyio.current_time())
        finally:
            if conn is not None:
                conn.terminate()

    async def _reconnect_and_resync(self, lost_at: float) -> asyncpg.Connection:
        conn = await self._reconnect()
        log.warning("change feed listening again after %.1f s", anyio.current_time() - lost_at)
        if self.on_resync is not None:
            try:
                await self.on_resync()
            except Exception:
                log.exception("resynchronising after reconnecting failed")
        return conn

    async def _until_lost(self, conn: asyncpg.Connection) -> None:
        while not conn.is_closed():
            with anyio.move_on_after(LIVENESS_EVERY_S):
                await self._lost.wait()
                return
            alive = False
            with anyio.move_on_after(LIVENESS_TIMEOUT_S):
                try:
                    alive = await conn.fetchval("SELECT 1") == 1
                except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                    alive = False
            if not alive:
                return

    async def _reconnect(self) -> asyncpg.Connection:
        backoff = Backoff()
        while True:
            with anyio.move_on_after(backoff.next()):
                await self._wake.wait()
            self._wake = anyio.Event()
            try:
                return await self.connect()
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):  # timeouts too
                continue


@asynccontextmanager
async def listening(
    dsn: str,
    on_change: ChangeHandler,
    *,
    on_resync: ResyncHandler | None = None,
    supervisor: Supervisor | None = None,
) -> AsyncIterator[ChangeFeed]:
    """Deliver every change to `on_change`, in order, while the context is open. The first
    connection must succeed (start-up fails loudly); later losses are reconnected, and an
    unexpected error is contained by `supervisor` (which reports the feed) and the feed
    started again."""
    supervisor = supervisor or Supervisor()
    feed = ChangeFeed(dsn, on_change, on_resync)
    with driver_errors("listen for changes"):
        feed._conn = await feed.connect()
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(supervisor.keep_running, "change feed delivery", feed.deliver)
            tasks.start_soon(supervisor.keep_running, "change feed", feed.keep_connected)
            try:
                yield feed
            finally:
                tasks.cancel_scope.cancel()
                feed.stop()
    finally:
        feed._receive.close()
        if feed._conn is not None:
            feed._conn.terminate()
