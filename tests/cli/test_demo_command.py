from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_db_commands import run_cli


def test_the_demo_runs_on_a_fresh_data_dir_and_again(tmp_path: Path) -> None:
    first = run_cli("demo", "--data-dir", str(tmp_path))
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "FAST      memory.query_entities\n" in out
    assert "STANDARD  memory.search_sessions, memory.query_entities" in out
    for tool in ("query_entities", "search_sessions", "get_session_summary", "search_facts"):
        assert f"> memory.{tool}(" in out
    assert "as ysolde: nothing - the Salt Knives are a secret" in out
    assert "as berrit: ['Salt Knives']" in out
    assert "## Who you are: Brannoch" in out and "Active quest: The Missing Caravan" in out
    status = json.loads(run_cli("status", "--json", "--data-dir", str(tmp_path)).stdout)
    second = run_cli("demo", "--data-dir", str(tmp_path))
    assert second.returncode == 0, second.stderr
    again = json.loads(run_cli("status", "--json", "--data-dir", str(tmp_path)).stdout)
    assert again["campaigns"] == status["campaigns"]
    [demo] = status["campaigns"]
    assert (demo["sessions"], demo["entries"], demo["entities"]) == (2, 19, 13)
