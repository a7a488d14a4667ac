"""Values computed from one campaign's data, kept until that data changes."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

import anyio

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.errors import driver_errors

T = TypeVar("T")
# Counters moved by triggers on every change, by any connection: to the entities (sql/007),
# and to anything an NPC knows, entities, relationships and facts (sql/015).
ENTITY_VERSION = "SELECT coalesce((SELECT version FROM entity_versions WHERE campaign_id = $1), 0)"
KNOWLEDGE_VERSION = (
    "SELECT coalesce((SELECT version FROM knowledge_versions WHERE campaign_id = $1), 0)"
)
DEFAULT_CAPACITY = 64


class VersionedCache:
    """What is derived from a campaign's data (who may know which entities, their names to
    match and to redact; an NPC's identity), computed once and reused while the data it is
    derived from does not change.

    Every change to that data, by any process, moves a counter (`version_query` reads it).
    Each lookup reads it first (one primary-key row) and drops whatever was computed at
    another value. A value is tagged with the counter read before computing it, so it can only be
    newer than its tag, never older: a change is seen by the first lookup after its commit.
    """

    def __init__(
        self,
        db: Database,
        campaign_id: str,
        version_query: str,
        capacity: int = DEFAULT_CAPACITY,
    ) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id
        self._version_query = version_query
        self.capacity = capacity
        self._version: int | None = None
        self._values: OrderedDict[Hashable, Any] = OrderedDict()

    async def version(self) -> int:
        with driver_errors("read the campaign's version"):
            return int(await self._pool.fetchval(self._version_query, self.campaign_id))

    async def get(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> T:
        """The value under `key`, computed by `compute` if the data changed since, or it
        was never computed (or was evicted: the least recently used go first)."""
        version = await self.version()
        if version != self._version:
            self._values.clear()
            self._version = version
        if key in self._values:
            self._values.move_to_end(key)
            kept: T = self._values[key]
            return kept
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
