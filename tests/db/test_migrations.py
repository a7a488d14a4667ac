from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import asyncpg
import pytest

from glyphoxa_mcp.db.migrations import (
    Migration,
    load_migrations,
    migrate,
    migrations_dir,
    schema_version,
)
from glyphoxa_mcp.errors import EmbeddingDimensionMismatchError, MigrationError
from tests.conftest import PostgresForTests, _create_database, _drop_database

EXPECTED_TABLES = {
    "campaigns",
    "scenes",
    "session_npcs",
    "summary_parts",
    "sessions",
    "session_entries",
    "chunks",
    "entities",
    "relationships",
    "facts",
    "glyphoxa_migrations",
    "pending_entities",
    "entity_versions",
    "entity_changes",
    "knowledge_versions",
    "campaign_row_counts",
    "session_chunk_entities",
    "access_tokens",
    "embedding_model",
    "session_facts",
    "names_read",
    "word_collections",
    "word_frequencies",
    "word_postings",
    "word_audiences",
    "word_readers",
    "lore_documents",
    "lore_sections",
    "lore_pins",
}


async def tables(conn: asyncpg.Connection) -> set[str]:
    rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {row["tablename"] for row in rows}


async def test_migrating_an_empty_database_creates_every_layer(empty_database: str) -> None:
    conn = await asyncpg.connect(empty_database)
    try:
        assert await schema_version(conn) == 0
        report = await migrate(conn, 384)
        assert [m.version for m in report.applied] == [m.version for m in load_migrations()]
        assert report.schema_version == load_migrations()[-1].version
        assert await tables(conn) == EXPECTED_TABLES
        assert await schema_version(conn) == report.schema_version
        dim = await conn.fetchval(
            "SELECT atttypmod FROM pg_attribute "
            "WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
        )
        assert dim == 384
    finally:
        await conn.close()


async def test_migrating_again_is_a_no_op(empty_database: str) -> None:
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn, 384)
        recorded = await conn.fetch("SELECT version, applied_at FROM glyphoxa_migrations")
        again = await migrate(conn, 384)
        assert again.applied == ()
        assert await conn.fetch("SELECT version, applied_at FROM glyphoxa_migrations") == recorded
    finally:
        await conn.close()


async def test_concurrent_migrations_apply_each_file_once(empty_database: str) -> None:
    conns = [await asyncpg.connect(empty_database) for _ in range(3)]
    try:
        reports = await asyncio.gather(*(migrate(conn, 384) for conn in conns))
        assert sum(len(report.applied) for report in reports) == len(load_migrations())
    finally:
        for conn in conns:
            await conn.close()


async def test_a_different_embedding_dimension_is_refused_with_the_fix(
    empty_database: str,
) -> None:
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn, 384)
        with pytest.raises(EmbeddingDimensionMismatchError) as caught:
            await migrate(conn, 1536)
        message = str(caught.value)
        assert "384" in message and "1536" in message
        assert "GLYPHOXA_EMBEDDING_DIM=384" in message
    finally:
        await conn.close()


@pytest.mark.slow
async def test_an_unset_dimension_keeps_the_databases_own_and_starts_new_ones_at_256(
    test_server: PostgresForTests, empty_database: str
) -> None:
    conn = await asyncpg.connect(empty_database)
    try:
        assert (await migrate(conn, None)).embedding_dim == 256
    finally:
        await conn.close()
    # A database created at 384 dimensions before 256 became the default stays at 384.
    name = f"glyphoxa_dim_{uuid.uuid4().hex[:8]}"
    await _create_database(test_server.admin_dsn, name, template=test_server.template_384)
    conn = await asyncpg.connect(test_server.dsn(name))
    try:
        assert (await migrate(conn, None)).embedding_dim == 384
    finally:
        await conn.close()
        await _drop_database(test_server.admin_dsn, name)


async def test_an_edited_migration_is_refused(empty_database: str) -> None:
    original = load_migrations()
    edited = [
        Migration(m.version, m.name, m.template + "\n-- edited") if i == 0 else m
        for i, m in enumerate(original)
    ]
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn, 384, original)
        with pytest.raises(MigrationError, match="edited after it was applied"):
            await migrate(conn, 384, edited)
    finally:
        await conn.close()


async def test_a_database_newer_than_the_code_is_refused(empty_database: str) -> None:
    migrations = load_migrations()
    newer = [*migrations, Migration(999, "from_the_future", "SELECT 1;")]
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn, 384, newer)
        with pytest.raises(MigrationError, match="newer than this glyphoxa-mcp"):
            await migrate(conn, 384, migrations)
    finally:
        await conn.close()


async def test_a_failing_migration_leaves_nothing_half_applied(empty_database: str) -> None:
    broken = [
        *load_migrations(),
        Migration(998, "broken", "CREATE TABLE half (x int); SELECT 1/0;"),
    ]
    conn = await asyncpg.connect(empty_database)
    try:
        with pytest.raises(MigrationError):
            await migrate(conn, 384, broken)
        assert "half" not in await tables(conn)
        assert await schema_version(conn) == load_migrations()[-1].version
    finally:
        await conn.close()


def test_migration_files_are_numbered_and_found_in_the_source_tree() -> None:
    directory = migrations_dir()
    assert Path(str(directory)).name == "sql"
    versions = [m.version for m in load_migrations()]
    assert versions == sorted(set(versions)) and versions[0] == 1


def test_two_files_with_one_version_are_refused(tmp_path: Path) -> None:
    (tmp_path / "001_a.sql").write_text("SELECT 1;")
    (tmp_path / "001_b.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="share version 001"):
        load_migrations(tmp_path)


async def test_a_table_a_migration_rebuilds_is_vacuumed_once_it_is_committed(
    empty_database: str,
) -> None:
    rebuilding = [
        *load_migrations(),
        Migration(
            998,
            "rebuilt",
            "CREATE TABLE rebuilt AS SELECT g AS x FROM generate_series(1, 1000) g;\n"
            "-- vacuum after: rebuilt\n",
        ),
    ]
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn, 384, rebuilding)
        # Vacuumed and analyzed, after the commit (in its transaction VACUUM fails): its
        # pages can be marked all-visible, and the planner knows its rows.
        vacuumed, analyzed, applied = await conn.fetchrow(
            """SELECT s.last_vacuum, s.last_analyze, m.applied_at
               FROM pg_stat_user_tables s, glyphoxa_migrations m
               WHERE s.relname = 'rebuilt' AND m.version = 998"""
        )
        assert vacuumed is not None and analyzed is not None and vacuumed >= applied
    finally:
        await conn.close()
