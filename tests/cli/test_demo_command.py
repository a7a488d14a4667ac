from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.cli.runner import run_in_process
from tests.cli.test_db_commands import run_cli


@pytest.mark.e2e
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
    assert (demo["sessions"], demo["entries"], demo["entities"]) == (2, 19, 31)


# In process, in a test database: the commands' logic; the demo above runs them as processes
# on an embedded data directory.
@pytest.mark.slow
def test_the_sample_campaign_can_be_printed_edited_and_loaded(
    tmp_path: Path, glyphoxa: Cli
) -> None:
    sample = run_in_process("campaign", "sample")
    assert sample.returncode == 0 and sample.stdout.startswith("# The Salt Road")
    mine = tmp_path / "mine.yaml"
    mine.write_text(sample.stdout.replace("id: demo", "id: mine"))
    dry = glyphoxa("campaign", "load", str(mine), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert report["dry_run"] and report["counts"]["entity"]["created"] == 31
    loaded = glyphoxa("campaign", "load", str(mine))
    assert "31 entities (31 new, 0 changed)" in loaded.stdout
    again = glyphoxa("campaign", "load", str(mine))
    assert "Nothing changed." in again.stdout
    mine.write_text(mine.read_text().replace("type: npc", "type: dragon", 1))
    broken = glyphoxa("campaign", "load", str(mine))
    assert (
        broken.returncode == 2
        and f"{mine}:" in broken.stderr
        and "entities[0].type" in broken.stderr
    )
