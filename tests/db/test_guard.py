"""The MemoryGuard on a real database and on an address where nothing answers. (A database
frozen and restarted under a running server is in tests/server/test_outages.py.)"""

from __future__ import annotations

import logging
import socket
import time

import anyio
import pytest

from glyphoxa_mcp.backoff import Backoff
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.guard import MemoryGuard
from glyphoxa_mcp.errors import DatabaseUnavailableError, DeadlineExceeded, MemoryUnavailableError
from tests.conftest import PostgresForTests


def nothing_listening() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"postgresql://nobody@127.0.0.1:{port}/nothing"


def test_backoff_doubles_from_one_second_to_thirty_and_starts_over_after_a_success() -> None:
    backoff = Backoff()
    assert [backoff.next() for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    backoff.reset()
    assert backoff.next() == 1


async def test_a_call_on_a_healthy_database_returns_its_result(
    test_server: PostgresForTests,
) -> None:
    async def answer() -> int:
        return 42

    async with MemoryGuard(test_server.admin_dsn).running() as guard:
        assert await guard.within(1.0, answer) == 42
        assert await guard.confirm(1.0) is True


async def test_a_slow_call_on_a_healthy_database_is_a_deadline_not_an_outage(
    test_server: PostgresForTests,
) -> None:
    async def slow() -> None:
        await anyio.sleep(5)

    async with MemoryGuard(test_server.admin_dsn).running() as guard:
        with pytest.raises(DeadlineExceeded):
            await guard.within(0.3, slow)
        assert guard.available


@pytest.mark.slow
async def test_only_a_call_past_half_its_deadline_has_the_database_probed(
    test_server: PostgresForTests,
) -> None:
    async def quick() -> int:
        return 1

    async def slow() -> None:
        await anyio.sleep(5)

    async with MemoryGuard(test_server.admin_dsn).running() as guard:
        before = guard._probe
        for _ in range(50):
            await guard.within(1.0, quick)
        await anyio.sleep(0.6)  # past half of every deadline above
        assert guard._probe is before
        began = guard.clock()
        with pytest.raises(DeadlineExceeded):
            await guard.within(0.4, slow)
        assert guard._probe is not None and guard._probe.started >= began + 0.2
        assert guard._probe.ok is True


async def test_an_unreachable_database_is_unavailable_and_then_answered_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def lost() -> None:
        raise DatabaseUnavailableError("connection refused")

    caplog.set_level(logging.WARNING, logger="glyphoxa_mcp.db.guard")
    async with MemoryGuard(nothing_listening()).running() as guard:
        with pytest.raises(MemoryUnavailableError):
            await guard.within(1.0, lost)
        assert not guard.available
        started = time.monotonic()
        for _ in range(3):
            with pytest.raises(MemoryUnavailableError):
                await guard.within(1.0, lost)
        assert time.monotonic() - started < 1.0
    down = [r for r in caplog.records if "unavailable" in r.getMessage()]
    assert len(down) == 1  # each change of state is logged once


async def test_long_work_is_cancelled_when_the_database_stops_answering() -> None:
    async def forever() -> None:
        await anyio.sleep_forever()

    async with MemoryGuard(nothing_listening()).running() as guard:
        guard.report()
        with anyio.fail_after(5), pytest.raises(MemoryUnavailableError):
            await guard.unless_down(forever)


async def test_an_unwatched_guard_still_looks_when_asked(test_server: PostgresForTests) -> None:
    assert await MemoryGuard(test_server.admin_dsn).confirm(1.0) is True
    assert await MemoryGuard(nothing_listening()).confirm(1.0) is False


async def test_a_pool_with_every_connection_taken_is_saturated(db: Database) -> None:
    small = await Database.open_dsn(db.location, db.embedding_dim, min_size=1, max_size=1)
    try:
        assert not small.guard.saturated()
        async with small.pool.acquire():
            assert small.guard.saturated()
        assert not small.guard.saturated()
    finally:
        await small.close()
