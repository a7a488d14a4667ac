"""`campaign export C FILE` and `campaign import FILE [--as NEW]`, in process on a clone of
the saga (tests/storage/saga_fixtures.py)."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder
from tests.cli.conftest import Cli
from tests.cli.runner import Ran, run_in_process
from tests.conftest import DatabaseFactory, PostgresForTests
from tests.storage.saga_fixtures import CAMPAIGN, clone_of, saga_dsn


@pytest.fixture(scope="module")
def seeded(test_server: PostgresForTests) -> str:
    return saga_dsn(test_server, WordLlamaEmbedder())


@pytest.fixture
async def saga_cli(databases: DatabaseFactory, seeded: str) -> AsyncIterator[Cli]:
    """`glyphoxa-mcp ARGS --dsn <a clone of the saga>`."""
    async with clone_of(databases, seeded) as db:

        def run(*args: str) -> Ran:
            return run_in_process(*args, "--dsn", db.location.dsn)

        yield run


@pytest.mark.slow
async def test_a_campaign_exported_is_imported_under_another_id(
    saga_cli: Cli, glyphoxa: Cli, tmp_path: Path
) -> None:
    archive = tmp_path / "ashfall.glyphoxa.jsonl.gz"
    exported = saga_cli("campaign", "export", CAMPAIGN, str(archive))
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.startswith(f"Exported campaign 'ashfall' to {archive} (")
    assert json.loads(gzip.decompress(archive.read_bytes()).splitlines()[0])["campaign"] == CAMPAIGN
    assert [p.name for p in tmp_path.iterdir()] == [archive.name]  # nothing half-written left

    again = saga_cli("campaign", "import", str(archive))
    assert again.returncode != 0
    assert "'ashfall' exists already; nothing was imported" in again.stderr

    copied = saga_cli("campaign", "import", str(archive), "--as", "ashfall-2", "--json")
    assert copied.returncode == 0, copied.stderr
    rows = json.loads(copied.stdout)["rows"]
    assert rows["session_entries"] == 10 and rows["sessions"] == 2

    # Into another database, with its own id.
    restored = glyphoxa("campaign", "import", str(archive))
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith("Imported campaign 'ashfall' from ")
    assert "2 sessions, 10 lines, " in restored.stdout
    assert "token create --campaign ashfall" in restored.stdout


def test_an_archive_that_is_not_one_is_named(glyphoxa: Cli, tmp_path: Path) -> None:
    missing = glyphoxa("campaign", "import", str(tmp_path / "nothing.gz"))
    assert missing.returncode != 0 and "nothing.gz: no such file." in missing.stderr
    other = tmp_path / "notes.jsonl"
    other.write_text('{"hello": "world"}\n')
    refused = glyphoxa("campaign", "import", str(other))
    assert refused.returncode != 0
    assert "notes.jsonl:1: not a campaign archive" in refused.stderr


def test_exporting_a_campaign_that_is_not_there_writes_nothing(
    glyphoxa: Cli, tmp_path: Path
) -> None:
    target = tmp_path / "none.gz"
    refused = glyphoxa("campaign", "export", "nowhere", str(target))
    assert refused.returncode != 0 and "No campaign 'nowhere'" in refused.stderr
    assert not any(tmp_path.iterdir())
