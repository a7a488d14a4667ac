"""The CLI as a user runs it: a separate process, flags and GLYPHOXA_* variables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.runner import run_in_process
from tests.conftest import PostgresForTests

pytestmark = pytest.mark.e2e


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GLYPHOXA_")}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "glyphoxa_mcp", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


def test_status_on_a_fresh_data_dir_creates_the_database(tmp_path: Path) -> None:
    result = run_cli("status", "--json", env={"GLYPHOXA_DATA_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["schema_version"] >= 1 and status["embedding_dim"] == 256
    assert status["location"] == f"embedded PostgreSQL in {tmp_path / 'postgres'}"
    assert status["campaigns"] == []
    table = run_cli("status", "--data-dir", str(tmp_path))
    assert "schema version:" in table.stdout and "campaigns:       none yet" in table.stdout


def test_migrate_then_status_against_an_external_dsn(test_server: PostgresForTests) -> None:
    import asyncio
    import uuid

    from tests.conftest import _create_database, _drop_database

    name = f"glyphoxa_cli_{uuid.uuid4().hex[:8]}"
    asyncio.run(_create_database(test_server.admin_dsn, name))
    try:
        dsn = test_server.dsn(name)
        first = run_cli("migrate", "--dsn", dsn)
        assert first.returncode == 0, first.stderr
        assert "applied 001_initial_schema" in first.stdout
        # The rest in process: the commands' logic, without a process start each.
        second = run_in_process("migrate", env={"GLYPHOXA_DSN": dsn})
        assert "schema is up to date" in second.stdout
        mismatch = run_in_process("status", "--dsn", dsn, "--embedding-dim", "768")
        assert mismatch.returncode == 1
        assert "stores 256-dimensional embeddings" in mismatch.stderr
        assert "Traceback" not in mismatch.stderr
    finally:
        asyncio.run(_drop_database(test_server.admin_dsn, name))


def test_bad_settings_exit_2_and_name_the_variable() -> None:
    result = run_cli("status", env={"GLYPHOXA_EMBEDDING_DIM": "lots"})
    assert result.returncode == 2
    assert "GLYPHOXA_EMBEDDING_DIM" in result.stderr and "Traceback" not in result.stderr


def test_the_console_script_and_module_agree(tmp_path: Path) -> None:
    help_text = run_cli("--help").stdout
    for command in ("migrate", "status"):
        assert command in help_text
    assert "GLYPHOXA_DATA_DIR" in run_cli("status", "--help").stdout
