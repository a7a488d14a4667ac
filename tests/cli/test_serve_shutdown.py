"""`serve` and `record` stopped by a signal: they exit as interrupted, and the embedded
PostgreSQL stops with the last process using it, however that process ended."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import anyio
import asyncpg
import httpx
import psutil
import pytest
from mcp import types
from mcp.client import Client

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.keeper import read_listed
from glyphoxa_mcp.domain.models import NewSession
from glyphoxa_mcp.server.hosting import SHUTDOWN_GRACE_S
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.cli.test_db_commands import run_cli

pytestmark = pytest.mark.e2e

# A busy two-core machine: what "promptly" and "within a few seconds" mean here.
EXIT_S = 10.0
POSTGRES_GONE_S = 5.0


def wait_for(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def postgres_runs(data_dir: Path) -> bool:
    """Whether a `postgres -D <data_dir>/postgres` process is alive."""
    pgdata = str((data_dir / "postgres").resolve())
    for process in psutil.process_iter(["name", "cmdline", "status"]):
        info = process.info
        if (
            info["name"] == "postgres"
            and info["status"] != psutil.STATUS_ZOMBIE
            and pgdata in (info["cmdline"] or [])
        ):
            return True
    return False


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    """A data directory with campaign 'default' (stdio serves it), whose PostgreSQL is stopped
    between tests."""
    # Not under pytest's basetemp, for the reason tests/conftest.py gives.
    path = Path(tempfile.mkdtemp(prefix="glyphoxa-shutdown-"))
    added = run_cli(
        "entity", "add", "Mira", "npc", "--data-dir", str(path), "--campaign", "default"
    )
    assert added.returncode == 0, added.stderr
    assert wait_for(lambda: not postgres_runs(path), POSTGRES_GONE_S)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def running(
    log: Path, *args: str, env: dict[str, str] | None = None, clean: bool = True
) -> Iterator[subprocess.Popen[str]]:
    """`glyphoxa-mcp ARGS` with pipes for stdin and stdout, its stderr in `log` (without a
    traceback, if `clean`); killed if a test leaves it running."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GLYPHOXA_")}
    with log.open("w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "glyphoxa_mcp", *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            assert process.stdin and process.stdout
            process.stdin.close()
            process.stdout.close()
    if clean:
        assert "Traceback" not in log.read_text(), log.read_text()


def serve(
    log: Path, *args: str, env: dict[str, str] | None = None, clean: bool = True
) -> contextlib.AbstractContextManager[subprocess.Popen[str]]:
    """`glyphoxa-mcp serve ARGS`, as `running` runs it."""
    return running(log, "serve", *args, env=env, clean=clean)


@contextlib.contextmanager
def serve_http(
    data_dir: Path, log: Path, transport: str = "http"
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`serve` over HTTP (or SSE) on a free loopback port; the process and its base URL."""
    port = free_port()
    with serve(
        log,
        "--data-dir",
        str(data_dir),
        "--transport",
        transport,
        "--auth",
        "none",
        "--port",
        str(port),
    ) as process:
        yield process, f"http://127.0.0.1:{port}"


def wait_until_healthy(base: str, process: subprocess.Popen[str]) -> None:
    def healthy() -> bool:
        assert process.poll() is None, "serve exited while starting"
        try:
            return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    assert wait_for(healthy, 120), "serve did not become healthy"


def wait_until_stdio_answers(process: subprocess.Popen[str]) -> None:
    """An MCP handshake's first request and its answer: the stdio loop is running."""
    assert process.stdin and process.stdout
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    process.stdin.write(json.dumps(initialize) + "\n")
    process.stdin.flush()
    ready, _, _ = select.select([process.stdout], [], [], 120)
    assert ready, "serve did not answer over stdio"
    assert json.loads(process.stdout.readline())["id"] == 1


def stop(process: subprocess.Popen[str], signum: int) -> tuple[int, float]:
    """Send `signum`; the exit code and the seconds until the process exited."""
    began = time.monotonic()
    process.send_signal(signum)
    code = process.wait(timeout=EXIT_S + 20)
    return code, time.monotonic() - began


@pytest.mark.parametrize(
    ("transport", "signum", "code"),
    [
        ("stdio", signal.SIGTERM, 143),
        ("stdio", signal.SIGINT, 130),
        ("http", signal.SIGTERM, 143),
        ("sse", signal.SIGTERM, 143),
    ],
)
def test_a_signal_stops_serve_and_its_embedded_postgres(
    data_dir: Path, tmp_path: Path, transport: str, signum: int, code: int
) -> None:
    log = tmp_path / "serve.log"
    if transport == "stdio":
        with serve(log, "--data-dir", str(data_dir)) as process:
            wait_until_stdio_answers(process)
            exit_code, took = stop(process, signum)
    else:
        with serve_http(data_dir, log, transport) as (process, base):
            wait_until_healthy(base, process)
            exit_code, took = stop(process, signum)
    assert exit_code == code
    assert took < EXIT_S
    assert wait_for(lambda: not postgres_runs(data_dir), POSTGRES_GONE_S)


def test_postgres_outlives_a_killed_user_while_another_remains(
    data_dir: Path, tmp_path: Path
) -> None:
    with (
        serve_http(data_dir, tmp_path / "first.log") as (killed, first_base),
        serve_http(data_dir, tmp_path / "second.log") as (survivor, second_base),
    ):
        wait_until_healthy(first_base, killed)
        wait_until_healthy(second_base, survivor)
        pgdata = data_dir / "postgres"
        assert sorted(read_listed(pgdata) or []) == sorted([killed.pid, survivor.pid])

        killed.kill()
        killed.wait()
        assert wait_for(lambda: read_listed(pgdata) == [survivor.pid], POSTGRES_GONE_S)
        assert postgres_runs(data_dir)
        assert httpx.get(f"{second_base}/healthz", timeout=5).json()["database"] == "ok"

        survivor.kill()
        survivor.wait()
        assert wait_for(lambda: not postgres_runs(data_dir), POSTGRES_GONE_S)


@pytest.fixture
async def served_by_dsn(db256: Database) -> dict[str, str]:
    """Environment for `serve --transport http` over a test database with campaign 'ashfall'
    and session 's1', DEEP and unhurried."""
    await Campaigns(db256).ensure("ashfall", "Ashfall")
    await CampaignMemory(db256, "ashfall").sessions.upsert(NewSession(id="s1", title="Kettle"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GLYPHOXA_", "OPENAI_"))}
    env.update(
        {
            "GLYPHOXA_DSN": db256.location.dsn,
            "GLYPHOXA_CAMPAIGN": "ashfall",
            "GLYPHOXA_AUTH": "none",
            "GLYPHOXA_TIER": "DEEP",
            "GLYPHOXA_DEEP_DEADLINE_MS": "60000",
        }
    )
    return env


@contextlib.asynccontextmanager
async def sessions_locked(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """The sessions table locked against every reader until the block ends."""
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
            yield conn
    finally:
        await conn.close()


async def wait_until_a_query_waits(conn: asyncpg.Connection) -> None:
    with anyio.fail_after(30):
        while not await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND datname = current_database()"
        ):
            await anyio.sleep(0.05)


async def wait_until_refusing(base: str) -> None:
    """Shutting down: the server no longer accepts connections."""
    with anyio.fail_after(30):
        while True:
            try:
                async with httpx.AsyncClient() as http:
                    await http.get(f"{base}/healthz", timeout=1)
            except httpx.TransportError:
                return
            await anyio.sleep(0.05)


async def test_a_call_in_flight_when_sigterm_comes_still_finishes(
    served_by_dsn: dict[str, str], db256: Database, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with serve(
        tmp_path / "serve.log", "--transport", "http", "--port", str(port), env=served_by_dsn
    ) as process:
        wait_until_healthy(base, process)
        async with Client(f"{base}/mcp") as client:
            await client.call_tool("memory.get_session_summary", {"session_id": "s1"})
            answers: list[types.CallToolResult] = []

            async def call() -> None:
                answers.append(
                    await client.call_tool("memory.get_session_summary", {"session_id": "s1"})
                )

            # Leaving the block releases the lock first: the call goes on while the server
            # stops, and the task group waits for it.
            async with (
                anyio.create_task_group() as tg,
                sessions_locked(db256.location.dsn) as lock,
            ):
                tg.start_soon(call)
                await wait_until_a_query_waits(lock)
                process.send_signal(signal.SIGTERM)
                await wait_until_refusing(base)
        assert not answers[0].is_error
        assert answers[0].structured_content["session_id"] == "s1"
        assert process.wait(timeout=EXIT_S) == 143


async def test_over_stdio_a_call_in_flight_when_sigterm_comes_still_finishes(
    served_by_dsn: dict[str, str], db256: Database, tmp_path: Path
) -> None:
    with serve(tmp_path / "serve.log", env=served_by_dsn) as process:
        wait_until_stdio_answers(process)
        assert process.stdin and process.stdout
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory.get_session_summary", "arguments": {"session_id": "s1"}},
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with sessions_locked(db256.location.dsn) as lock:
            for message in (initialized, call):
                process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            await wait_until_a_query_waits(lock)
            process.send_signal(signal.SIGTERM)
            await anyio.sleep(0.5)  # the signal is handled while the call still waits
        ready, _, _ = select.select([process.stdout], [], [], 30)
        assert ready, "no answer to the call in flight"
        answer = json.loads(process.stdout.readline())
        assert answer["id"] == 2 and not answer["result"].get("isError"), answer
        assert process.wait(timeout=EXIT_S) == 143


async def test_a_call_still_in_flight_after_the_grace_is_cancelled(
    served_by_dsn: dict[str, str], db256: Database, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with serve(
        tmp_path / "serve.log",
        *("--transport", "http", "--port", str(port)),
        env=served_by_dsn,
        clean=False,
    ) as process:
        wait_until_healthy(base, process)
        async with Client(f"{base}/mcp") as client:
            await client.call_tool("memory.get_session_summary", {"session_id": "s1"})

            async def call() -> None:
                with contextlib.suppress(Exception):  # the server goes away mid-call
                    await client.call_tool("memory.get_session_summary", {"session_id": "s1"})

            async with anyio.create_task_group() as tg:
                async with sessions_locked(db256.location.dsn) as lock:
                    tg.start_soon(call)
                    await wait_until_a_query_waits(lock)
                    code, took = stop(process, signal.SIGTERM)
                tg.cancel_scope.cancel()
        assert code == 143
        assert SHUTDOWN_GRACE_S <= took < SHUTDOWN_GRACE_S + EXIT_S
    # uvicorn logs the cancelled request's traceback.
    assert "timeout graceful shutdown exceeded" in (tmp_path / "serve.log").read_text()


def test_a_signal_ends_record_with_what_it_read_stored_and_its_postgres_stopped(
    data_dir: Path, tmp_path: Path
) -> None:
    record = ("record", "--data-dir", str(data_dir), "--campaign", "default")
    with running(tmp_path / "record.log", *record, "--session", "sigterm") as process:
        assert process.stdin and process.stdout
        process.stdin.write("Mira: The bell rang twice.\n")
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 120)
        assert ready and "The bell rang twice." in process.stdout.readline()
        exit_code, took = stop(process, signal.SIGTERM)  # stdin still open
    assert (exit_code, took < EXIT_S) == (143, True)
    shown = run_cli("session", "show", "sigterm", "--data-dir", str(data_dir))
    assert "The bell rang twice." in shown.stdout, shown.stderr
    assert wait_for(lambda: not postgres_runs(data_dir), POSTGRES_GONE_S)
