"""`glyphoxa-mcp serve --transport http` in a subprocess on a free loopback port, as a
deployment runs it: bearer tokens, every viewer, the tiers' own deadlines.

Its own process, not this one's event loop: the clients that load it run here, and in one
Python process their work (the SDK client validates every result against the tool's schema)
would take the server's CPU. Measured at reference scale with 64 clients for 30 s: 76 calls/s
with the server in its own process, 48 with both in one.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import DEVNULL

import anyio
from httpx2 import AsyncClient as HttpClient
from httpx2 import TransportError

from glyphoxa_mcp.access import is_loopback
from glyphoxa_mcp.bench.load import MAX_CLIENTS, log_counts
from glyphoxa_mcp.errors import BenchError, InvalidInputError

STARTUP_TIMEOUT_S = 120
STOP_TIMEOUT_S = 20
LOG_TAIL_LINES = 20


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def serve_command(host: str, port: int) -> list[str]:
    return [
        sys.executable,
        *("-m", "glyphoxa_mcp", "serve", "--transport", "http", "--auth", "token"),
        *("--host", host, "--port", str(port), "--log-level", "WARNING"),
        # Every client of a viewer shares its token: the cap must not stop the largest run.
        *("--max-sessions-per-token", str(MAX_CLIENTS)),
    ]


def serve_environment(dsn: str) -> dict[str, str]:
    """This environment without GLYPHOXA_* settings, then the database and the offline
    embedder: the DSN travels in the environment, not on a command line others can read."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GLYPHOXA_")}
    return env | {"GLYPHOXA_DSN": dsn, "GLYPHOXA_EMBEDDER": "local"}


def _tail(log: Path) -> str:
    lines = log.read_text(errors="replace").strip().splitlines()
    return "\n".join(lines[-LOG_TAIL_LINES:])


async def _wait_until_healthy(base: str, process: anyio.abc.Process, log: Path) -> None:
    async with HttpClient(timeout=5) as http:
        with anyio.fail_after(STARTUP_TIMEOUT_S):
            while True:
                if process.returncode is not None:
                    raise BenchError(f"`serve` stopped while starting:\n{_tail(log)}")
                try:
                    if (await http.get(f"{base}/healthz")).status_code == 200:
                        return
                except TransportError:
                    pass
                await anyio.sleep(0.2)


@dataclass
class Served:
    base: str
    # The `serve` process, whose CPU the load bench reads.
    pid: int
    # Lines of the server's log by kind (`load.log_counts`), known once it has stopped.
    log: dict[str, int] = field(default_factory=dict)


@contextlib.asynccontextmanager
async def serving(dsn: str, host: str) -> AsyncIterator[Served]:
    """`serve` over HTTP on a free port of the loopback address `host`, until the block ends.
    Its log is shown if it fails to start, and counted when it stops."""
    if not is_loopback(host):
        raise InvalidInputError(f"--host {host}: the load bench serves on loopback only.")
    address = host.strip("[]")
    port = free_port(address)
    with tempfile.TemporaryDirectory(prefix="glyphoxa-load-") as folder:
        log = Path(folder) / "serve.log"
        with log.open("wb") as output:
            process = await anyio.open_process(
                serve_command(address, port),
                stdin=DEVNULL,
                stdout=DEVNULL,
                stderr=output,
                env=serve_environment(dsn),
            )
        served = Served(f"http://{_url_host(address)}:{port}", process.pid)
        try:
            await _wait_until_healthy(served.base, process, log)
            yield served
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    process.terminate()
                with anyio.move_on_after(STOP_TIMEOUT_S):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()
                await process.aclose()
            served.log = log_counts(log.read_text(errors="replace"))
