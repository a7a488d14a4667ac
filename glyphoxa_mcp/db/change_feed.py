"""Listen for what other connections changed (see sql/002_change_notifications.sql)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Literal

import anyio
import asyncpg
from pydantic import BaseModel, ValidationError

from glyphoxa_mcp.db.errors import driver_errors

log = logging.getLogger(__name__)
CHANNEL = "glyphoxa_changes"


class Change(BaseModel):
    campaign: str
    kind: Literal["transcript", "graph"]
    session: str | None = None
    table: str | None = None


@asynccontextmanager
async def listening(
    dsn: str, on_change: Callable[[Change], Awaitable[None]]
) -> AsyncIterator[None]:
    """Deliver every change to `on_change`, in order, while the context is open.

    The listener has its own connection: LISTEN holds a connection for as long as it runs.
    """
    send, receive = anyio.create_memory_object_stream[Change](max_buffer_size=1000)

    def received(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        try:
            change = Change.model_validate(json.loads(payload))
        except (ValueError, ValidationError):
            log.warning("ignoring a malformed change notification: %r", payload)
            return
        try:
            send.send_nowait(change)
        except anyio.WouldBlock:
            log.warning("change notifications are arriving faster than they are handled")

    async def deliver() -> None:
        async with receive:
            async for change in receive:
                try:
                    await on_change(change)
                except Exception:  # one failed delivery must not stop the feed
                    log.exception("handling %s failed", change)

    with driver_errors("listen for changes"):
        conn = await asyncpg.connect(dsn)
    try:
        await conn.add_listener(CHANNEL, received)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(deliver)
            try:
                yield
            finally:
                send.close()
    finally:
        await conn.close()
