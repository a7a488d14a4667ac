"""The keeper's bookkeeping: who still uses an embedded server, without PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from glyphoxa_mcp.db.keeper import HANDLE_FILE, KEEPER_LOCK, keep, live_users, read_listed

STARTS = {101: 5.0, 102: 7.0}


def started(pid: int) -> float | None:
    return STARTS.get(pid)


def test_a_listed_process_that_is_gone_is_no_user() -> None:
    live, seen = live_users([101, 102, 103], {}, started)
    assert live == [101, 102]
    assert seen == {101: 5.0, 102: 7.0}


def test_a_pid_taken_by_a_newer_process_is_no_user() -> None:
    live, seen = live_users([101, 102], {101: 5.0, 102: 6.0}, started)
    assert live == [101]
    assert seen == {101: 5.0}


def test_start_times_are_kept_only_for_listed_pids() -> None:
    _, seen = live_users([102], {101: 5.0, 102: 7.0}, started)
    assert seen == {102: 7.0}


def test_the_list_reads_as_unknown_while_pgserver_rewrites_it(tmp_path: Path) -> None:
    assert read_listed(tmp_path) == []
    (tmp_path / HANDLE_FILE).write_text("[12, 3")
    assert read_listed(tmp_path) is None
    (tmp_path / HANDLE_FILE).write_text("[12, 34]")
    assert read_listed(tmp_path) == [12, 34]


def a_finished_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    shell = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    return int(shell.stdout)


def test_the_keeper_drops_dead_users_and_leaves_when_nobody_is_left(tmp_path: Path) -> None:
    gone = a_finished_pid()
    (tmp_path / HANDLE_FILE).write_text(json.dumps([gone]))
    with (tmp_path / KEEPER_LOCK).open("a") as held:
        keep(tmp_path, tmp_path / "server.lock", held, poll_s=0.01)
        assert held.closed
    assert read_listed(tmp_path) == []


def test_the_keeper_leaves_when_its_data_directory_is_removed(tmp_path: Path) -> None:
    (tmp_path / HANDLE_FILE).write_text(json.dumps([os.getpid()]))
    with (tmp_path / KEEPER_LOCK).open("a") as held:
        (tmp_path / KEEPER_LOCK).unlink()
        keep(tmp_path, tmp_path / "server.lock", held, poll_s=0.01)
    assert read_listed(tmp_path) == [os.getpid()]
