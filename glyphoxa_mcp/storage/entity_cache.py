"""Values computed from one campaign's entities, kept until the entities change."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

import anyio

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.errors import driver_errors

T = TypeVar("T")
SELECT_VERSION = "SELECT coalesce((SELECT version FROM entity_versions WHERE campaign_id = $1), 0)"
DEFAULT_CAPACITY = 64


class EntityCache:
    """What is derived from a campaign's entities (who may know which of them, their names to
    match and to redact), computed once and reused while no entity changes.

    Every change to the campaign's entities, by any process, moves a counter (sql/005). Each
    lookup reads it first (one primary-key row) and drops whatever was computed at another
    value. A value is tagged with the counter read before computing it, so it can only be
    newer than its tag, never older: a change is seen by the first lookup after its commit.
    """

    def __init__(self, db: Database, campaign_id: str, capacity: int = DEFAULT_CAPACITY) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id
        self.capacity = capacity
        self._version: int | None = None
        self._values: OrderedDict[Hashable, Any] = OrderedDict()

    async def version(self) -> int:
        with driver_errors("read the entities' version"):
            return await self._pool.fetchval(SELECT_VERSION, self.campaign_id)

    async def get(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> T:
        """The value under `key`, computed by `compute` if the entities changed since, or it
        was never computed (or was evicted: the least recently used go first)."""
        version = await self.version()
        if version != self._version:
            self._values.clear()
            self._version = version
        if key in self._values:
            self._values.move_to_end(key)
            return self._values[key]
        # Shielded: a caller cancelled at its deadline must not throw the work away, or after
        # each change every call with a short deadline would start over and be cancelled again.
        with anyio.CancelScope(shield=True):
            value = await compute()
        # A lookup that saw a newer version meanwhile has dropped everything; this value may be
        # older than that version, so it is used once and not kept.
        if self._version == version:
            self._values[key] = value
            while len(self._values) > self.capacity:
                self._values.popitem(last=False)
        return value
