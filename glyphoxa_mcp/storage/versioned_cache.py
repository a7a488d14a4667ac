"""Values computed from one campaign's data, kept until that data changes."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
# Counters moved by triggers on every change, by any connection: to the entities (sql/007),
# and to anything an NPC knows, entities, relationships and facts (sql/015).
ENTITY_VERSION = "SELECT coalesce((SELECT version FROM entity_versions WHERE campaign_id = $1), 0)"
KNOWLEDGE_VERSION = (
    "SELECT coalesce((SELECT version FROM knowledge_versions WHERE campaign_id = $1), 0)"
)
# Both at once, as one call reads them (in one snapshot, so neither is older than the other).
BOTH_VERSIONS = f"SELECT ({ENTITY_VERSION}) AS entities, ({KNOWLEDGE_VERSION}) AS knowledge"
DEFAULT_CAPACITY = 64


@dataclass(frozen=True)
class CampaignVersions:
    """A campaign's two counters as one call read them, together."""

    entities: int
    knowledge: int


async def campaign_versions(db: Database, campaign_id: str) -> CampaignVersions:
    """Both counters in one statement: a call reads them once, and every cache it asks
    takes its own from them (sql/007, sql/015)."""
    with driver_errors("read the campaign's version"):
        row = await db.pool.fetchrow(BOTH_VERSIONS, campaign_id)
    assert row is not None  # one row, whatever the campaign
    return CampaignVersions(entities=int(row["entities"]), knowledge=int(row["knowledge"]))


class VersionedCache:
    """What is derived from a campaign's data (who may know which entities, their names to
    match and to redact; an NPC's identity), computed once and reused while the data it is
    derived from does not change.

    Every change to that data, by any process, moves a counter (`version_query` reads it).
    Each lookup reads it first (one primary-key row), or is given it as its call read it
    with the other counter (`campaign_versions`), and drops whatever was computed at
    another value. A value is tagged with the counter read before computing it, so it can only be
    newer than its tag, never older: a change is seen by the first lookup after its commit.

    Single flight: callers asking for the same key at the same version while it is being
    computed wait for that computation instead of starting their own (after a DM's edit,
    every NPC's next call would otherwise rebuild the same scope at once).
    """

    def __init__(
        self,
        db: Database,
        campaign_id: str,
        version_query: str,
        capacity: int = DEFAULT_CAPACITY,
        keeps_outdated: bool = True,
    ) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id
        self._version_query = version_query
        self.capacity = capacity
        # Whether values of an older version are kept for `get_updated` to patch: not for a
        # cache only ever asked with `get` and `get_many`, which would hold them for nothing.
        self._keeps_outdated = keeps_outdated
        self._version: int | None = None
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        # Values of an older version, kept for `get_updated` to start from.
        self._outdated: OrderedDict[Hashable, Any] = OrderedDict()
        self._computing: dict[tuple[int, Hashable], _Flight] = {}

    async def version(self) -> int:
        with driver_errors("read the campaign's version"):
            return int(await self._pool.fetchval(self._version_query, self.campaign_id))

    async def get(
        self, key: Hashable, compute: Callable[[], Awaitable[T]], version: int | None = None
    ) -> T:
        """The value under `key`, computed by `compute` if the data changed since, or it
        was never computed (or was evicted: the least recently used go first). `version`:
        the counter as this call read it already (otherwise it is read now)."""
        return await self.get_updated(key, compute, None, version)

    async def get_updated(
        self,
        key: Hashable,
        compute: Callable[[], Awaitable[T]],
        update: Callable[[T], Awaitable[T]] | None,
        version: int | None = None,
    ) -> T:
        """Like `get`, but a value computed at an older version is not thrown away: when the
        data changes, `update` makes the current value from it (reading only what changed,
        issue 17) instead of `compute` making it from nothing. Updates are single flight
        and shielded like computations."""
        version, behind = await self._at(version)
        if key in self._values:
            self._values.move_to_end(key)
            kept: T = self._values[key]
            return kept  # for a lookup behind, newer than it asked for: never wrong
        if behind and update is None:
            # What `compute` makes may rest on what its caller read before the change (its
            # scope): made for this caller alone, and kept for no one.
            return await self._computed(None, key, compute)
        # A value `update` makes is read afresh whoever asks: one behind works at the
        # current version, and shares its computation.
        outdated = self._outdated.get(key) if update is not None else None
        if outdated is not None and update is not None:
            previous = outdated

            async def from_previous() -> T:
                return await update(previous)

            return await self._computed(version, key, from_previous)
        return await self._computed(version, key, compute)

    async def get_many(
        self,
        keys: Sequence[K],
        compute: Callable[[list[K]], Awaitable[Mapping[K, V]]],
        version: int,
    ) -> dict[K, V]:
        """The values under `keys` at `version` (the counter as this call read it): those
        not kept are computed together, by one call of `compute` given the keys missing
        (a value for each). Not single flight: a value is a part of one answer, cheap to
        compute twice, and one batch of them is one statement."""
        version, behind = await self._at(version)
        found: dict[K, V] = {}
        missing: list[K] = []
        for key in keys:
            if key in self._values:
                self._values.move_to_end(key)
                found[key] = self._values[key]
            else:
                missing.append(key)
        if not missing:
            return found
        computed = await compute(missing)
        for key in missing:
            found[key] = computed[key]
            # Kept unless made for a lookup behind, or the version moved on meanwhile.
            if not behind and self._version == version:
                self._values[key] = computed[key]
        self._trim(self._values)
        return found

    async def _at(self, version: int | None) -> tuple[int, bool]:
        """The version a lookup works at, and whether it is behind the current one: its
        caller read the counter (`version`; read now if None) before a change that another
        lookup has seen. Then the counter is read again: still older than before, the
        counters went back (the database restored under a running server) and nothing kept
        is trusted any more; otherwise the lookup is behind."""
        if version is None:
            version = await self.version()
        behind = False
        if self._version is not None and version < self._version:
            noticed = self._version
            now = await self.version()
            if now < noticed:
                self._values.clear()
                self._outdated.clear()
                self._version = None
                version = now
            else:
                behind = True
                # The current version may have moved on again while the counter was read.
                version = max(now, self._version or now)
        if version != self._version:
            if self._keeps_outdated:
                # Older values wait to be updated; a plain `get` never sees them.
                self._outdated.update(self._values)
                self._trim(self._outdated)
            self._values.clear()
            self._version = version
        return version, behind

    async def _computed(
        self, version: int | None, key: Hashable, compute: Callable[[], Awaitable[T]]
    ) -> T:
        """`compute`'s value, kept at `version` (None: kept by no one, nor shared)."""
        if version is None:
            return await compute()
        flight = self._computing.get((version, key))
        if flight is not None:
            shared: T = await flight.result()
            return shared
        flight = self._computing[(version, key)] = _Flight()
        try:
            # Shielded: a caller cancelled at its deadline must not throw the work away, or
            # after each change every call with a short deadline would start over and be
            # cancelled again.
            with anyio.CancelScope(shield=True):
                try:
                    value = await compute()
                except BaseException as exc:
                    flight.fail(exc)
                    raise
            flight.succeed(value)
        finally:
            del self._computing[(version, key)]
        # A lookup that saw a newer version meanwhile has dropped everything; this value may be
        # older than that version, so it is used once and not kept.
        if self._version == version:
            self._outdated.pop(key, None)
            self._values[key] = value
            self._trim(self._values)
        elif self._keeps_outdated:
            # Still newer than what an update would start from otherwise.
            self._outdated[key] = value
            self._trim(self._outdated)
        return value

    def _trim(self, values: OrderedDict[Hashable, Any]) -> None:
        """Down to capacity, the least recently used first."""
        while len(values) > self.capacity:
            values.popitem(last=False)


class _Flight:
    """One computation in progress, and how its waiters learn the outcome."""

    def __init__(self) -> None:
        self._done = anyio.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def succeed(self, value: Any) -> None:
        self._value = value
        self._done.set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._done.set()

    async def result(self) -> Any:
        await self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value
