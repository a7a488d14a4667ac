"""The CPU counters read real processes: this one, a child burning CPU, a tree whose children
come and go, and the test PostgreSQL server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from glyphoxa_mcp.bench.cpu import (
    CpuMeter,
    add_ms,
    children_of,
    per_call_ms,
    postgres_counter,
    process_cpu_s,
    read_stat,
    spent_ms,
    tree_cpu_s,
)
from glyphoxa_mcp.db.database import Database

# A child that burns this much CPU (its own clock, so a busy machine only makes it slower),
# says so and waits for its stdin to close.
BURN_S = 0.3
BURNER = f"""
import sys, time
while time.process_time() < {BURN_S}:
    pass
print("burnt", flush=True)
sys.stdin.read()
"""
# A parent that starts a child burning BURN_S and waits for it to end (its time is then the
# parent's children's), then starts another that burns BURN_S and stays, and waits.
PARENT = f"""
import subprocess, sys
burner = {BURNER!r}
subprocess.run([sys.executable, "-c", burner], input="", text=True, check=True,
               stdout=subprocess.DEVNULL)
live = subprocess.Popen([sys.executable, "-c", burner], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, text=True)
assert live.stdout.readline() == "burnt\\n"
print(live.pid, flush=True)
sys.stdin.read()
live.stdin.close()
live.wait()
"""
# What starting Python costs a child, well above what it takes on a slow machine.
STARTUP_ALLOWANCE_S = 0.4


@pytest.fixture
def burnt() -> Iterator[subprocess.Popen[str]]:
    child = subprocess.Popen(
        [sys.executable, "-c", BURNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "burnt\n"
        yield child
    finally:
        child.communicate(timeout=10)


def _burn(seconds: float) -> None:
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass


def test_a_busy_child_s_cpu_is_read_from_its_counters(burnt: subprocess.Popen[str]) -> None:
    spent = process_cpu_s(burnt.pid)
    assert spent is not None
    # At least what it burnt, less a tick of truncation; at most that and its start-up.
    assert BURN_S - 0.02 <= spent <= BURN_S + STARTUP_ALLOWANCE_S
    stat = read_stat(burnt.pid)
    assert stat is not None and stat.name.startswith("python")
    assert stat.parent == os.getpid()


def test_a_process_that_is_gone_reads_as_none() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert process_cpu_s(child.pid) is None
    assert tree_cpu_s(child.pid) is None


@pytest.mark.slow
def test_a_tree_counts_children_that_ended_and_children_still_running() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        live = int(parent.stdout.readline())
        assert children_of(parent.pid) == [live]
        parent_stat = read_stat(parent.pid)
        assert parent_stat is not None
        # The child that ended is in the parent's reaped time, and only there.
        assert BURN_S - 0.02 <= parent_stat.reaped_children_s <= BURN_S + STARTUP_ALLOWANCE_S
        alone = process_cpu_s(parent.pid)
        whole = tree_cpu_s(parent.pid)
        assert alone is not None and whole is not None
        # Both burners, the parent and their start-ups.
        assert 2 * BURN_S - 0.04 <= whole - alone <= 2 * (BURN_S + STARTUP_ALLOWANCE_S)
    finally:
        parent.communicate("", timeout=10)


def test_the_meter_reads_this_process_exactly_and_others_by_name() -> None:
    with subprocess.Popen(["sleep", "30"]) as sleeper:
        try:
            meter = CpuMeter("self", {"sleeper": lambda: process_cpu_s(sleeper.pid), "gone": None})
            opening = meter.opening()
            _burn(0.05)
            spent = spent_ms(opening, meter.closing())
        finally:
            sleeper.kill()
    assert list(spent) == ["self", "sleeper", "gone"]
    assert 50 <= (spent["self"] or 0) < 50 + 20
    assert spent["sleeper"] == 0.0
    assert spent["gone"] is None


def test_per_call_figures_divide_by_the_calls_and_keep_what_is_unknown() -> None:
    total = add_ms({"bench": 10.0, "postgres": None}, {"bench": 5.0, "postgres": 3.0})
    assert total == {"bench": 15.0, "postgres": None}
    assert per_call_ms(total, 4) == {"bench": 3.75, "postgres": None}
    assert per_call_ms({"bench": 1.0}, 0) == {"bench": None}


async def test_the_postgres_server_is_found_and_its_backend_s_work_counted(db: Database) -> None:
    counter, note = await postgres_counter(db)
    assert note is None and counter is not None
    before = counter()
    async with db.pool.acquire() as conn:
        await conn.fetchval("SELECT count(*) FROM generate_series(1, 3000000)")
    after = counter()
    assert before is not None and after is not None
    # The statement takes a few hundred ms of a backend's CPU.
    assert after - before >= 0.1
