from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from glyphoxa_mcp.config import DatabaseSettings
from glyphoxa_mcp.db.database import Database, locate, redact_dsn
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.errors import DatabaseUnavailableError, InvalidInputError, MigrationError

pytestmark = pytest.mark.e2e


async def test_the_embedded_database_is_created_and_reused(tmp_path: Path) -> None:
    settings = DatabaseSettings.build(data_dir=tmp_path / "data")
    async with await Database.open(settings) as db:
        await db.pool.execute("CREATE TABLE kept (note text)")
        await db.pool.execute("INSERT INTO kept VALUES ('still here')")
    again = await locate(settings)
    assert "embedded PostgreSQL" in again.description and str(tmp_path) in again.description
    conn = await asyncpg.connect(again.dsn)
    try:
        assert await conn.fetchval("SELECT note FROM kept") == "still here"
    finally:
        await conn.close()


async def test_an_unreachable_server_gives_an_actionable_error() -> None:
    settings = DatabaseSettings.build(dsn="postgresql://nobody@127.0.0.1:1/none")
    with pytest.raises(DatabaseUnavailableError, match="GLYPHOXA_DSN"):
        await Database.open(settings)


def test_passwords_are_hidden_when_showing_a_dsn() -> None:
    assert redact_dsn("postgresql://gm:hunter2@db:5432/glyphoxa") == (
        "postgresql://gm:***@db:5432/glyphoxa"
    )
    assert redact_dsn("postgresql://gm@db/glyphoxa") == "postgresql://gm@db/glyphoxa"


async def test_driver_errors_become_our_errors_with_the_cause_kept(empty_database: str) -> None:
    conn = await asyncpg.connect(empty_database)
    try:
        with (
            pytest.raises(MigrationError, match="glyphoxa-mcp migrate") as caught,
            driver_errors("read entities"),
        ):
            await conn.fetch("SELECT * FROM entities")
        assert isinstance(caught.value.__cause__, asyncpg.UndefinedTableError)
        with pytest.raises(InvalidInputError), driver_errors("parse a number"):
            await conn.fetch("SELECT $1::int", "not a number")
    finally:
        await conn.close()


def test_database_dsn_swaps_only_the_database_name() -> None:
    from glyphoxa_mcp.db.embedded import database_dsn

    assert database_dsn("postgresql://postgres:@/postgres?host=/tmp/pg", "glyphoxa") == (
        "postgresql://postgres:@/glyphoxa?host=/tmp/pg"
    )
    assert database_dsn("postgresql://gm:pw@db:5432", "glyphoxa") == (
        "postgresql://gm:pw@db:5432/glyphoxa"
    )


async def test_a_second_process_shares_the_embedded_server_and_leaves_it_running(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    settings = DatabaseSettings.build(data_dir=tmp_path)
    async with await Database.open(settings) as db:
        other = subprocess.run(
            [sys.executable, "-m", "glyphoxa_mcp", "status", "--data-dir", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert other.returncode == 0, other.stderr
        assert f"embedded PostgreSQL in {tmp_path / 'postgres'}" in other.stdout
        # The other process has exited; this one's server and pool still work.
        assert await db.pool.fetchval("SELECT count(*) FROM campaigns") == 0


async def test_a_transaction_commits_every_store_write_or_none(db: Database) -> None:
    from datetime import UTC, datetime

    from glyphoxa_mcp.domain.models import NewEntity, NewEntry, NewRelationship, NewSession
    from glyphoxa_mcp.errors import NotFoundError
    from glyphoxa_mcp.storage.campaigns import Campaigns
    from glyphoxa_mcp.storage.memory import CampaignMemory
    from glyphoxa_mcp.storage.status import database_status

    line = NewEntry(
        speaker_id="a", speaker_name="Ana", text="hi", spoken_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    with pytest.raises(NotFoundError):
        async with db.transaction() as tx:
            await Campaigns(tx).ensure("doomed")
            memory = CampaignMemory(tx, "doomed")
            await memory.sessions.upsert(NewSession(id="s1"))
            await memory.log.append_many("s1", [line])
            await memory.log.append_many("s1", [line.model_copy(update={"text": "again"})])
            await memory.graph.upsert_entity(NewEntity(type="npc", name="Ana"))
            await memory.graph.upsert_relationship(
                NewRelationship(source_id="ana", target_id="nobody", rel_type="KNOWS")
            )
    assert (await database_status(db)).campaigns == ()
    async with db.transaction() as tx:
        await Campaigns(tx).ensure("kept")
        await CampaignMemory(tx, "kept").graph.upsert_entity(NewEntity(type="npc", name="Ana"))
    assert [c.entities for c in (await database_status(db)).campaigns] == [1]
