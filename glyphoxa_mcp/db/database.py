"""Opening the memory database: resolve where it is, migrate it, and pool connections."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import asyncpg
from pgvector.asyncpg import register_vector

from glyphoxa_mcp.config import DatabaseSettings
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.db.embedded import (
    EMBEDDED_DATABASE,
    database_dsn,
    postgres_data_dir,
    start_embedded_server,
)
from glyphoxa_mcp.db.guard import MemoryGuard
from glyphoxa_mcp.db.migrations import MigrationReport, migrate
from glyphoxa_mcp.db.vector_connection import VectorConnection, remember_iterative_scan


@dataclass(frozen=True)
class DatabaseLocation:
    dsn: str
    description: str


async def init_connection(conn: asyncpg.Connection) -> None:
    """Per-connection codecs: pgvector's `vector`, and JSON for jsonb; and whether the server
    can scan a vector index iteratively."""
    await register_vector(conn)
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    await remember_iterative_scan(conn)


async def keep_session(_conn: asyncpg.Connection) -> None:
    """How a released connection is reset: asyncpg itself still rolls back an open
    transaction and drops listeners; its reset query (RESET ALL, UNLISTEN *, CLOSE ALL,
    pg_advisory_unlock_all) is skipped. The only session state on a pooled connection is what
    `init_connection` set for every one of them (the HNSW scan settings); every other SET is
    LOCAL to a transaction, temporary tables drop with it, LISTEN and advisory locks take
    connections of their own - and the query was one more round trip after every statement,
    as many as the statements themselves."""


def redact_dsn(dsn: str) -> str:
    parts = urlsplit(dsn)
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


async def locate(settings: DatabaseSettings) -> DatabaseLocation:
    """The DSN to use: the configured one, or the embedded server (started if need be)."""
    if settings.dsn:
        return DatabaseLocation(settings.dsn, redact_dsn(settings.dsn))
    admin_dsn = await anyio.to_thread.run_sync(start_embedded_server, settings.data_dir)
    await ensure_database_exists(admin_dsn, EMBEDDED_DATABASE)
    dsn = database_dsn(admin_dsn, EMBEDDED_DATABASE)
    await update_vector_extension(dsn)
    pgdata = postgres_data_dir(settings.data_dir)
    return DatabaseLocation(dsn, f"embedded PostgreSQL in {pgdata}")


SELECT_VECTOR_BEHIND = """
SELECT 1 FROM pg_available_extensions
WHERE name = 'vector' AND installed_version IS DISTINCT FROM default_version
    AND installed_version IS NOT NULL
"""


async def update_vector_extension(dsn: str) -> None:
    """The embedded server's pgvector library is newer than a database made by an older one
    records (0.6 from pgserver 0.1): bring the extension's SQL up to the library's version.
    Ours to change on the embedded server only; a --dsn server's extensions are its owner's."""
    with driver_errors("update the vector extension"):
        conn = await asyncpg.connect(dsn)
        try:
            if await conn.fetchval(SELECT_VECTOR_BEHIND):
                await conn.execute("ALTER EXTENSION vector UPDATE")
        finally:
            await conn.close()


async def ensure_database_exists(admin_dsn: str, name: str) -> None:
    with driver_errors(f"create the database {name!r}"):
        conn = await asyncpg.connect(admin_dsn)
        try:
            exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
            if not exists:
                # Another process may create it between the check and here.
                with contextlib.suppress(asyncpg.DuplicateDatabaseError):
                    await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()


async def migrate_dsn(dsn: str, embedding_dim: int | None) -> MigrationReport:
    with driver_errors("connect to the database"):
        conn = await asyncpg.connect(dsn)
    try:
        return await migrate(conn, embedding_dim)
    finally:
        await conn.close()


async def _create_pool(dsn: str, min_size: int, max_size: int) -> asyncpg.Pool:
    """A pool whose every connection has the codecs and scan settings of `init_connection`."""
    return await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        init=init_connection,
        reset=keep_session,
        connection_class=VectorConnection,
    )


class OneConnection:
    """Pool-shaped access to one connection, so stores built on it share its transaction."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[asyncpg.Connection]:
        yield self._conn

    async def execute(self, *args: Any, **kwargs: Any) -> str:
        status: str = await self._conn.execute(*args, **kwargs)
        return status

    async def executemany(self, *args: Any, **kwargs: Any) -> None:
        await self._conn.executemany(*args, **kwargs)

    async def fetch(self, *args: Any, **kwargs: Any) -> list[asyncpg.Record]:
        rows: list[asyncpg.Record] = await self._conn.fetch(*args, **kwargs)
        return rows

    async def fetchrow(self, *args: Any, **kwargs: Any) -> asyncpg.Record | None:
        return await self._conn.fetchrow(*args, **kwargs)

    async def fetchval(self, *args: Any, **kwargs: Any) -> Any:
        return await self._conn.fetchval(*args, **kwargs)


# The write lane's connections (recorder appends, live indexing, ending a session), beside
# the read lane's: a backlog of writes waits for these alone, never for a reader's.
WRITE_POOL_SIZE = 4


class Database:
    """A migrated database and its connection pools; the one handle stores are built on.

    Two lanes: `pool` serves reads (tools, resources, the DM's commands) and `writes`, a
    Database of its own over a second pool, serves the recorder and the pipeline it starts,
    so neither can take every connection from the other. Without a write pool (a transaction,
    a test's single pool), `writes` is this same handle."""

    def __init__(
        self,
        pool: asyncpg.Pool | OneConnection,
        location: DatabaseLocation,
        embedding_dim: int,
        guard: MemoryGuard | None = None,
        *,
        write_pool: asyncpg.Pool | None = None,
    ) -> None:
        self.pool = pool
        self.location = location
        self.embedding_dim = embedding_dim
        self.guard = guard or MemoryGuard(location.dsn)
        self.writes: Database = self
        if write_pool is not None:
            self.writes = Database(write_pool, location, embedding_dim, self.guard)
        if guard is None and isinstance(pool, asyncpg.Pool):
            self.guard.on_recovered(self._renew_connections)
            self.guard.saturated = self.saturated

    def saturated(self) -> bool:
        """Every connection of this handle's pool is taken: a call may be waiting for one."""
        pool = self.pool
        if not isinstance(pool, asyncpg.Pool):
            return False
        idle: int = pool.get_idle_size()
        size: int = pool.get_size()
        return idle == 0 and size >= int(pool.get_max_size())

    async def _renew_connections(self) -> None:
        """After an outage, idle pooled connections may be dead: replace each at its next use
        (in both lanes)."""
        for pool in {id(db.pool): db.pool for db in (self, self.writes)}.values():
            if isinstance(pool, asyncpg.Pool):
                await pool.expire_connections()

    @classmethod
    async def open(
        cls,
        settings: DatabaseSettings,
        *,
        min_size: int = 1,
        max_size: int = 10,
        write_size: int = WRITE_POOL_SIZE,
    ) -> Database:
        location = await locate(settings)
        return await cls.open_dsn(
            location,
            settings.embedding_dim,
            min_size=min_size,
            max_size=max_size,
            write_size=write_size,
        )

    @classmethod
    async def open_dsn(
        cls,
        location: DatabaseLocation,
        embedding_dim: int | None,
        *,
        min_size: int = 1,
        max_size: int = 10,
        write_size: int = WRITE_POOL_SIZE,
    ) -> Database:
        """`embedding_dim` None: the database's own (see `migrate`). The read pool keeps
        `min_size` connections open; the write pool (`write_size`, 0: none, writes share the
        read pool) opens its connections when writes come, so a command that only reads
        holds no more connections than before."""
        report = await migrate_dsn(location.dsn, embedding_dim)
        with driver_errors("connect to the database"):
            pool = await _create_pool(location.dsn, min_size, max_size)
            try:
                writes = await _create_pool(location.dsn, 0, write_size) if write_size else None
            except BaseException:
                await pool.close()
                raise
        return cls(pool, location, report.embedding_dim, write_pool=writes)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        """A handle whose stores all write in one transaction: committed when the block ends,
        rolled back (nothing written) when it raises."""
        with driver_errors("open a transaction"):
            async with self.pool.acquire() as conn, conn.transaction():
                yield Database(OneConnection(conn), self.location, self.embedding_dim, self.guard)

    async def close(self) -> None:
        assert isinstance(self.pool, asyncpg.Pool), "close the database, not a transaction"
        try:
            if self.writes is not self:
                await self.writes.close()
        finally:
            await self.pool.close()

    async def __aenter__(self) -> Database:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
