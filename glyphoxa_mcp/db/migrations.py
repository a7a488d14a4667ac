"""Numbered SQL migrations from `sql/`, applied in order under an advisory lock."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import asyncpg

from glyphoxa_mcp.config import DEFAULT_EMBEDDING_DIM
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.db.vector_connection import SELECT_PGVECTOR_VERSION
from glyphoxa_mcp.errors import EmbeddingDimensionMismatchError, MigrationError

# Any fixed 64-bit key works; every glyphoxa process takes the same one before migrating.
MIGRATION_LOCK_KEY = int.from_bytes(b"glyphoxa", "big") >> 1
EMBEDDING_DIM_TOKEN = "{{EMBEDDING_DIM}}"
MIN_SERVER_VERSION = 150000
MIN_PGVECTOR_VERSION = (0, 5)

_FILE_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")
# A migration that rebuilds a table asks for it to be vacuumed once it is committed (VACUUM
# cannot run in its transaction): until then an index-only scan of the new table reads its
# heap for every row, the visibility map being empty.
_VACUUM_AFTER = re.compile(r"^-- vacuum after: ([a-z_][a-z0-9_]*)$", re.MULTILINE)

CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS glyphoxa_migrations (
    version     integer PRIMARY KEY,
    name        text NOT NULL,
    checksum    text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)
"""
SELECT_APPLIED = "SELECT version, name, checksum FROM glyphoxa_migrations ORDER BY version"
RECORD_APPLIED = "INSERT INTO glyphoxa_migrations (version, name, checksum) VALUES ($1, $2, $3)"
SELECT_STORED_DIMENSION = """
SELECT a.atttypmod
FROM pg_attribute a
WHERE a.attrelid = to_regclass('chunks') AND a.attname = 'embedding'
"""
SELECT_AVAILABLE_PGVECTOR = (
    "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    template: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.template.encode()).hexdigest()

    def render(self, embedding_dim: int) -> str:
        return self.template.replace(EMBEDDING_DIM_TOKEN, str(embedding_dim))

    @property
    def vacuumed_after(self) -> tuple[str, ...]:
        """Tables to vacuum and analyze once the migration is committed."""
        return tuple(_VACUUM_AFTER.findall(self.template))


@dataclass(frozen=True)
class MigrationReport:
    applied: tuple[Migration, ...]
    schema_version: int
    embedding_dim: int


def migrations_dir() -> Traversable:
    """`glyphoxa_mcp/sql` in an installed wheel; the repository's `sql/` in a source checkout."""
    packaged = resources.files("glyphoxa_mcp").joinpath("sql")
    if packaged.is_dir():
        return packaged
    source_tree = Path(__file__).resolve().parents[2] / "sql"
    if source_tree.is_dir():
        return source_tree
    raise MigrationError("The SQL migrations are missing from this installation; reinstall it.")


def load_migrations(directory: Traversable | None = None) -> list[Migration]:
    directory = directory or migrations_dir()
    found: dict[int, Migration] = {}
    for entry in directory.iterdir():
        match = _FILE_NAME.match(entry.name)
        if not match:
            continue
        version = int(match.group(1))
        if version in found:
            raise MigrationError(f"Two migrations share version {version:03d} in {directory}.")
        found[version] = Migration(version, match.group(2), entry.read_text(encoding="utf-8"))
    return [found[version] for version in sorted(found)]


async def migrate(
    conn: asyncpg.Connection,
    embedding_dim: int | None,
    migrations: list[Migration] | None = None,
) -> MigrationReport:
    """Apply pending migrations; a no-op when the schema is current.

    `embedding_dim` None takes the database's own dimension (DEFAULT_EMBEDDING_DIM for a new
    one); a given one that differs from the database's is refused.
    """
    migrations = load_migrations() if migrations is None else migrations
    with driver_errors("migrate the database"):
        await _check_server(conn)
        await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK_KEY)
        try:
            return await _migrate_locked(conn, embedding_dim, migrations)
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK_KEY)


async def _migrate_locked(
    conn: asyncpg.Connection, configured_dim: int | None, migrations: list[Migration]
) -> MigrationReport:
    await conn.execute(CREATE_MIGRATIONS_TABLE)
    applied = {row["version"]: row for row in await conn.fetch(SELECT_APPLIED)}
    known = {migration.version: migration for migration in migrations}
    _check_history(applied, known)
    embedding_dim = await _dimension(conn, configured_dim)

    pending = [m for m in migrations if m.version not in applied]
    for migration in pending:
        try:
            async with conn.transaction():
                await conn.execute(migration.render(embedding_dim))
                await conn.execute(
                    RECORD_APPLIED, migration.version, migration.name, migration.checksum
                )
        except asyncpg.PostgresError as exc:
            raise MigrationError(
                f"Migration {migration.version:03d}_{migration.name} failed and was rolled "
                f"back: {exc}"
            ) from exc
        for table in migration.vacuumed_after:
            await conn.execute(f"VACUUM (ANALYZE) {table}")
    versions = set(applied) | {m.version for m in pending}
    return MigrationReport(tuple(pending), max(versions, default=0), embedding_dim)


def _check_history(applied: dict[int, asyncpg.Record], known: dict[int, Migration]) -> None:
    unknown = sorted(set(applied) - set(known))
    if unknown:
        raise MigrationError(
            f"The database has schema version {max(unknown):03d}, newer than this glyphoxa-mcp "
            f"knows (up to {max(known, default=0):03d}). Upgrade glyphoxa-mcp."
        )
    for version, row in applied.items():
        if row["checksum"] != known[version].checksum:
            raise MigrationError(
                f"Migration {version:03d}_{row['name']} was edited after it was applied. "
                "Restore the original file and put the change in a new numbered migration."
            )


async def _dimension(conn: asyncpg.Connection, configured: int | None) -> int:
    """The dimension the database has or will be created with."""
    stored = await conn.fetchval(SELECT_STORED_DIMENSION)
    if configured is None:
        return DEFAULT_EMBEDDING_DIM if stored is None else stored
    if stored is not None and stored != configured:
        raise EmbeddingDimensionMismatchError(
            f"This database stores {stored}-dimensional embeddings, but the configured dimension "
            f"is {configured} (--embedding-dim / GLYPHOXA_EMBEDDING_DIM). Leave it unset, or set "
            f"GLYPHOXA_EMBEDDING_DIM={stored}, with a matching embedding model to keep using it, "
            "or point --data-dir / --dsn at a new database and ingest the sessions again."
        )
    return configured


async def _check_server(conn: asyncpg.Connection) -> None:
    server_version = int(await conn.fetchval("SHOW server_version_num"))
    if server_version < MIN_SERVER_VERSION:
        raise MigrationError(
            f"PostgreSQL {server_version // 10000} is too old; glyphoxa-mcp needs 15 or newer."
        )
    version = await conn.fetchval(SELECT_PGVECTOR_VERSION) or await conn.fetchval(
        SELECT_AVAILABLE_PGVECTOR
    )
    if version is None:
        raise MigrationError(
            "The pgvector extension is not installed on this PostgreSQL server. Install pgvector "
            "0.5 or newer, or run the pgvector/pgvector image from compose.yaml."
        )
    if tuple(int(part) for part in version.split(".")[:2]) < MIN_PGVECTOR_VERSION:
        raise MigrationError(f"pgvector {version} is too old; glyphoxa-mcp needs 0.5 or newer.")


async def schema_version(conn: asyncpg.Connection) -> int:
    with driver_errors("read the schema version"):
        if await conn.fetchval("SELECT to_regclass('glyphoxa_migrations')") is None:
            return 0
        return int(await conn.fetchval("SELECT coalesce(max(version), 0) FROM glyphoxa_migrations"))
