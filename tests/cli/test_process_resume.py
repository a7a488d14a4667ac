"""A `process` killed mid-run and started again finishes with nothing lost or duplicated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from glyphoxa_mcp.config import DatabaseSettings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.keeper import read_listed
from glyphoxa_mcp.pipeline.chunking import DEFAULT_POLICY, passages
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.cli.runner import Ran, run_in_process
from tests.cli.test_db_commands import run_cli

pytestmark = pytest.mark.e2e

LINES = 450
TOPICS = ["the caravan", "Saltmere", "the ferry", "forty silver", "the salt caves", "the tide"]


def transcript(path: Path) -> None:
    start = datetime(2026, 3, 7, 19, tzinfo=UTC)
    with path.open("w") as out:
        for i in range(LINES):
            line = {
                "speaker_id": f"p{i % 3}",
                "speaker_name": ["Kael", "Lyra", "Bran knock"][i % 3],
                "text": f"Line {i}: we talk about {TOPICS[i % len(TOPICS)]} and bran knock.",
                "timestamp": (start + timedelta(seconds=10 * i)).isoformat(),
            }
            out.write(json.dumps(line) + "\n")


async def test_a_killed_process_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, "--data-dir", str(tmp_path), "--campaign", "long")

    def in_process(*args: str) -> Ran:
        return run_in_process(*args, "--data-dir", str(tmp_path), "--campaign", "long")

    file = tmp_path / "long.jsonl"
    transcript(file)
    # The setup in process (this process uses the server below anyway); the processes that
    # matter are the one killed and the one that resumes.
    assert in_process("ingest", str(file), "--session", "s1").returncode == 0
    assert in_process("entity", "add", "Brannoch", "npc").returncode == 0

    environment = {k: v for k, v in os.environ.items() if not k.startswith("GLYPHOXA_")}
    command = [sys.executable, "-m", "glyphoxa_mcp", "process", "s1"]
    child = subprocess.Popen(
        [*command, "--data-dir", str(tmp_path), "--campaign", "long"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    settings = DatabaseSettings.build(data_dir=str(tmp_path))
    db = await Database.open(settings, max_size=1)
    try:
        memory = CampaignMemory(db, "long")
        deadline = time.monotonic() + 120
        stored = 0
        while stored == 0 and child.poll() is None and time.monotonic() < deadline:
            stored = await db.pool.fetchval("SELECT count(*) FROM chunks")
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        # The killed process never told pgserver it left; the keeper drops it from the list
        # of users, so the server still stops with the last process that uses it.
        deadline = time.monotonic() + 5
        while child.pid in (read_listed(tmp_path / "postgres") or []):
            assert time.monotonic() < deadline, "the killed process is still listed as a user"
            time.sleep(0.05)
        entries = await memory.log.entries("s1")
        expected = len(passages(entries, DEFAULT_POLICY))
        partial = await db.pool.fetchval("SELECT count(*) FROM chunks")
        assert 0 < partial < expected, "the kill should land mid-run"

        resumed = cli("process", "s1", "--json")
        assert resumed.returncode == 0, resumed.stderr
        report = json.loads(resumed.stdout)
        assert report["passages"] == expected
        assert report["embedded"] == expected - partial  # what was stored is not redone
        counts = await db.pool.fetchrow(
            "SELECT count(*) AS chunks, count(DISTINCT content) AS distinct_content, "
            "count(DISTINCT entry_ids) AS spans FROM chunks"
        )
        assert dict(counts) == {
            "chunks": expected,
            "distinct_content": expected,
            "spans": expected,
        }
        covered = await db.pool.fetchval(
            "SELECT count(DISTINCT u.entry_id) FROM chunks, unnest(entry_ids) AS u(entry_id)"
        )
        assert covered == LINES
        entries = await memory.log.entries("s1")
        assert all("Brannoch" in e.text and "bran knock" in e.raw_text for e in entries)
    finally:
        await db.close()
