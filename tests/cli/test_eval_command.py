from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.runner import run_in_process
from tests.cli.test_db_commands import run_cli
from tests.conftest import PostgresForTests, _create_database, _drop_database
from tests.evaluation.test_locomo import TINY


@pytest.fixture
def dsn384(test_server: PostgresForTests) -> Iterator[str]:
    name = f"glyphoxa_eval_{uuid.uuid4().hex[:8]}"
    asyncio.run(_create_database(test_server.admin_dsn, name, test_server.template_384))
    yield test_server.dsn(name)
    asyncio.run(_drop_database(test_server.admin_dsn, name))


@pytest.mark.e2e
def test_eval_locomo_reports_recall_per_category_as_json(dsn384: str) -> None:
    result = run_cli("eval", "locomo", str(TINY), "--dsn", dsn384, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["turns"], report["questions"], report["unscored"]) == (11, 5, 1)
    overall = next(row for row in report["rows"] if row["label"] == "overall (1-4)")
    assert overall["questions"] == 4 and overall["recall"]["20"] == 100.0
    # In process: refused before anything runs, no process start needed to see it.
    again = run_in_process("eval", "locomo", str(TINY), "--dsn", dsn384)
    assert again.returncode == 2 and "already exists" in again.stderr


@pytest.mark.e2e
def test_eval_locomo_runs_in_a_temporary_database_by_default(tmp_path: Path) -> None:
    user_data = tmp_path / "user-data"
    result = run_cli(
        "eval", "locomo", str(TINY), "--tune", env={"GLYPHOXA_DATA_DIR": str(user_data)}
    )
    assert result.returncode == 0, result.stderr
    assert "overall (1-4)" in result.stdout and "R@10" in result.stdout
    # Per conversation and the spread; one conversation has nothing to hold out against.
    assert "Spread of R@10 across conversations" in result.stdout
    assert "needs at least two conversations" in result.stdout
    assert not user_data.exists()


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (None, "no such file"),
        ("[]", "expected a LoCoMo file"),
        ('[{"conversation": {"session_1": []}, "qa": []}]', "no sessions"),
    ],
)
def test_bad_locomo_files_exit_2_naming_the_problem(
    tmp_path: Path, content: str | None, named: str
) -> None:
    path = tmp_path / "locomo.json"
    if content is not None:
        path.write_text(content)
    result = run_in_process("eval", "locomo", str(path))
    assert result.returncode == 2 and named in result.stderr and "Traceback" not in result.stderr
