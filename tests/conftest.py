"""Real PostgreSQL for every database test.

One server per test run: the embedded pgserver, or the server at GLYPHOXA_TEST_DSN (a DSN
whose user may create databases). The schema is migrated once into a template database and
each test gets its own clone, so tests never see each other's rows. The xdist workers of a run
share the embedded server, its templates and the seeded worlds tests only read or clone: each
is made once, by whichever worker needs it first, while the others wait for it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import hashlib
import itertools
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import asyncpg
import pytest

from glyphoxa_mcp.db.database import Database, DatabaseLocation, init_connection, keep_session
from glyphoxa_mcp.db.embedded import database_dsn, postgres_data_dir, start_embedded_server
from glyphoxa_mcp.db.migrations import migrate
from glyphoxa_mcp.domain.models import NewSession
from glyphoxa_mcp.domain.tiers import Tier, TierPolicy, tier_policy
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.server.semantic_fixtures import load_facts, load_sessions
from tests.storage.graph_fixtures import build_village

# Small vectors keep geometric expectations in tests readable.
TEST_EMBEDDING_DIM = 4
# Deadlines are tested in tests/server/test_tier_gate.py; elsewhere a busy test machine must
# not turn a slow call into a failure.
UNHURRIED_MS = 60_000


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as in a terminal, for the tests and the commands they start: a shell's
    background job (a CI runner may start the suite as one) begins with SIGINT ignored, which
    the commands' processes would inherit, and the tests that interrupt them would wait."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def unhurried(tier: Tier) -> TierPolicy:
    """The tier's limits with a deadline no test call reaches."""
    return tier_policy(tier, UNHURRIED_MS)


@dataclass(frozen=True)
class PostgresForTests:
    admin_dsn: str
    template: str
    template_384: str
    template_256: str
    run_dir: Path | None = None
    """Where the workers sharing this server take their turns (None: a server of this worker's
    own, at GLYPHOXA_TEST_DSN)."""

    def dsn(self, database: str) -> str:
        return database_dsn(self.admin_dsn, database)


async def _admin(admin_dsn: str, statement: str) -> None:
    conn = await asyncpg.connect(admin_dsn)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


async def _create_database(admin_dsn: str, name: str, template: str = "template0") -> None:
    await _admin(admin_dsn, f'CREATE DATABASE "{name}" TEMPLATE "{template}"')


async def _drop_database(admin_dsn: str, name: str) -> None:
    await _admin(admin_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def _prepare_template(admin_dsn: str, template: str, dimension: int) -> None:
    await _create_database(admin_dsn, template)
    conn = await asyncpg.connect(database_dsn(admin_dsn, template))
    try:
        await migrate(conn, dimension)
    finally:
        await conn.close()


# A throwaway server needs no durability: without fsync a dropped clone costs 30 ms, not
# 200 ms, and a commit waits for no disk. Settings reloaded without a restart; nothing a test
# checks depends on them (a crash of PostgreSQL alone loses nothing without fsync either).
THROWAWAY_SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    # A quarter of the default: the log may be in memory (`_scratch_dir`), and a checkpoint
    # without fsync costs little.
    "max_wal_size": "'256MB'",
}


async def _without_durability(admin_dsn: str) -> None:
    conn = await asyncpg.connect(admin_dsn)
    try:
        for name, value in THROWAWAY_SETTINGS.items():
            await conn.execute(f"ALTER SYSTEM SET {name} = {value}")
        await conn.execute("SELECT pg_reload_conf()")
    finally:
        await conn.close()


@contextlib.contextmanager
def _turn(run_dir: Path, name: str) -> Iterator[None]:
    """`name` to this worker alone among the run's workers, until the block ends."""
    with open(run_dir / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run_id(config: pytest.Config) -> str:
    """The same in every xdist worker of one run, another in every run."""
    workerinput: dict[str, str] | None = getattr(config, "workerinput", None)
    return (workerinput["testrunuid"] if workerinput else uuid.uuid4().hex)[:8]


def _remove_once_stopped(run_dir: Path) -> None:
    # pgserver deletes its data directory when the last process using the server leaves;
    # until then another worker still runs on it.
    if not postgres_data_dir(run_dir).exists():
        shutil.rmtree(run_dir, ignore_errors=True)


async def _exists(admin_dsn: str, database: str) -> bool:
    conn = await asyncpg.connect(admin_dsn)
    try:
        return bool(await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database))
    finally:
        await conn.close()


# Where the run's server keeps its data: memory when the machine has it to spare. A test
# database is a clone of a template, some 1,100 files made and deleted again; on a busy
# ext4 /tmp the kernel's search for a free inode took 150-500 ms a clone, on tmpfs 20 ms.
IN_MEMORY = Path("/dev/shm")
IN_MEMORY_SPARE = 2 * 1024**3


# A run killed outright leaves its data behind, which in memory stays until a reboot.
LEFT_BEHIND_AFTER_S = 3600


def _scratch_dir() -> Path:
    if IN_MEMORY.is_dir() and os.access(IN_MEMORY, os.W_OK):
        _remove_left_behind(IN_MEMORY)
        if shutil.disk_usage(IN_MEMORY).free >= IN_MEMORY_SPARE:
            return IN_MEMORY
    return Path(tempfile.gettempdir())


def _remove_left_behind(scratch: Path) -> None:
    """Remove the data of runs that ended long ago without a server still running on it."""
    for run_dir in scratch.glob("glyphoxa-test-*"):
        with contextlib.suppress(OSError, ValueError):
            if time.time() - run_dir.stat().st_mtime < LEFT_BEHIND_AFTER_S:
                continue
            pid_file = postgres_data_dir(run_dir) / "postmaster.pid"
            if pid_file.exists() and _running(int(pid_file.read_text().split()[0])):
                continue
            shutil.rmtree(run_dir)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _embedded_for_run(run: str) -> PostgresForTests:
    """The run's embedded server with its templates, started and migrated by the first worker
    to ask (not under pytest's basetemp: a second pytest session resets that tree to mode
    0700, which would lock out the unprivileged user pgserver runs PostgreSQL as under root)."""
    run_dir = _scratch_dir() / f"glyphoxa-test-{run}"
    run_dir.mkdir(mode=0o700, exist_ok=True)
    # Registered first, so it runs after pgserver's own exit handler has stopped the server.
    atexit.register(_remove_once_stopped, run_dir)
    with _turn(run_dir, "server"):
        # Joins the server if another worker started it (pgserver counts its users).
        admin_dsn = start_embedded_server(run_dir, delete_on_exit=True)
        server = _named_for(admin_dsn, run, run_dir)
        if not asyncio.run(_exists(admin_dsn, server.template_256)):
            asyncio.run(_without_durability(admin_dsn))
            _prepare_templates(server)
    return server


def _named_for(admin_dsn: str, run: str, run_dir: Path | None = None) -> PostgresForTests:
    return PostgresForTests(
        admin_dsn,
        f"glyphoxa_template_{run}",
        f"glyphoxa_template384_{run}",
        f"glyphoxa_template256_{run}",
        run_dir,
    )


def _prepare_templates(server: PostgresForTests) -> None:
    asyncio.run(_prepare_template(server.admin_dsn, server.template, TEST_EMBEDDING_DIM))
    # The offline model's width, for tests that embed real text.
    asyncio.run(_prepare_template(server.admin_dsn, server.template_384, 384))
    # The default offline model's (WordLlama) width; made last, so its presence says all are.
    asyncio.run(_prepare_template(server.admin_dsn, server.template_256, 256))


@pytest.fixture(scope="session")
def test_server(pytestconfig: pytest.Config) -> Iterator[PostgresForTests]:
    given = os.environ.get("GLYPHOXA_TEST_DSN")
    if not given:
        # Dropped with the server's data when the run's last worker leaves.
        yield _embedded_for_run(_run_id(pytestconfig))
        return
    # Only this run's own server is made throwaway, never a server given by GLYPHOXA_TEST_DSN;
    # on it each worker keeps templates of its own and drops them after.
    server = _named_for(given, uuid.uuid4().hex[:8])
    _prepare_templates(server)
    yield server
    for template in (server.template, server.template_384, server.template_256):
        asyncio.run(_drop_database(given, template))


@pytest.fixture
async def empty_database(test_server: PostgresForTests) -> AsyncIterator[str]:
    """The DSN of a new database with no schema at all."""
    name = f"glyphoxa_empty_{uuid.uuid4().hex[:8]}"
    await _create_database(test_server.admin_dsn, name)
    yield test_server.dsn(name)
    await _drop_database(test_server.admin_dsn, name)


class DatabaseFactory:
    """Clones of the templates, made ahead of the tests that take them and dropped after, by
    a thread of its own on one admin connection: a clone and a drop take about 150 ms of
    PostgreSQL's time, which the second core spends while the tests run on the first.
    Clones come first; drops wait until the next clones are ready."""

    AHEAD = 2
    CREATE, DROP, STOP = 0, 1, 2

    def __init__(self, server: PostgresForTests) -> None:
        self.server = server
        self._ready: dict[str, queue.Queue[str]] = {}
        self._work: queue.PriorityQueue[tuple[int, int, str]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._thread = threading.Thread(target=self._run, name="test-databases", daemon=True)
        self._thread.start()

    def _put(self, action: int, argument: str = "") -> None:
        self._work.put((action, next(self._order), argument))

    def _run(self) -> None:
        async def serve() -> None:
            admin = await asyncpg.connect(self.server.admin_dsn)
            try:
                while True:
                    action, _, argument = await asyncio.to_thread(self._work.get)
                    if action == self.STOP:
                        return
                    if action == self.DROP:
                        await admin.execute(f'DROP DATABASE IF EXISTS "{argument}" WITH (FORCE)')
                    else:
                        name = f"glyphoxa_test_{uuid.uuid4().hex[:8]}"
                        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{argument}"')
                        self._ready[argument].put(name)
            finally:
                await admin.close()

        asyncio.run(serve())

    async def take(self, template: str) -> str:
        """The name of a new clone of `template`, and another is started for the next test."""
        if template not in self._ready:
            self._ready[template] = queue.Queue()
            for _ in range(self.AHEAD):
                self._put(self.CREATE, template)
        self._put(self.CREATE, template)
        return await anyio.to_thread.run_sync(self._ready[template].get)

    def drop(self, name: str) -> None:
        self._put(self.DROP, name)

    def close(self) -> None:
        """Drop what is left, clones made ahead included, and stop."""
        self._put(self.STOP)
        self._thread.join(timeout=120)
        drops = [argument for action, _, argument in self._drain() if action == self.DROP]
        for waiting in self._ready.values():
            while not waiting.empty():
                drops.append(waiting.get())

        async def drop_all() -> None:
            for name in drops:
                await _drop_database(self.server.admin_dsn, name)

        asyncio.run(drop_all())

    def _drain(self) -> list[tuple[int, int, str]]:
        left = []
        while not self._work.empty():
            left.append(self._work.get())
        return left


@pytest.fixture(scope="session")
def databases(test_server: PostgresForTests) -> Iterator[DatabaseFactory]:
    factory = DatabaseFactory(test_server)
    yield factory
    factory.close()


@contextlib.asynccontextmanager
async def _database_from(
    factory: DatabaseFactory, template: str, dimension: int
) -> AsyncIterator[Database]:
    name = await factory.take(template)
    location = DatabaseLocation(factory.server.dsn(name), f"test database {name}")
    # A clone of a migrated template: no migration to check, only a pool to open.
    pool = await asyncpg.create_pool(
        location.dsn, min_size=1, max_size=4, init=init_connection, reset=keep_session
    )
    database = Database(pool, location, dimension)
    try:
        yield database
    finally:
        await database.close()
        factory.drop(name)


@pytest.fixture
async def db(test_server: PostgresForTests, databases: DatabaseFactory) -> AsyncIterator[Database]:
    """A migrated database of its own for this test (4-dimensional vectors)."""
    async with _database_from(databases, test_server.template, TEST_EMBEDDING_DIM) as database:
        yield database


@pytest.fixture
async def db384(
    test_server: PostgresForTests, databases: DatabaseFactory
) -> AsyncIterator[Database]:
    """A migrated database of its own, sized for the offline embedding model."""
    async with _database_from(databases, test_server.template_384, 384) as database:
        yield database


@pytest.fixture
async def db256(
    test_server: PostgresForTests, databases: DatabaseFactory
) -> AsyncIterator[Database]:
    """A migrated database of its own, sized for the default offline model (WordLlama)."""
    async with _database_from(databases, test_server.template_256, 256) as database:
        yield database


async def _campaign(
    db: Database, campaign_id: str, name: str, first_session: str
) -> CampaignMemory:
    await Campaigns(db).ensure(campaign_id, name)
    campaign = CampaignMemory(db, campaign_id)
    await campaign.sessions.upsert(NewSession(id="s1", title=first_session))
    return campaign


@pytest.fixture
async def memory(db: Database) -> CampaignMemory:
    """Campaign 'ashfall' with a session 's1'."""
    return await _campaign(db, "ashfall", "Ashfall", "The Red Kettle")


@pytest.fixture
async def other_campaign(db: Database) -> CampaignMemory:
    """A second campaign 'frostmere' with its own session 's1', for isolation tests."""
    return await _campaign(db, "frostmere", "Frostmere", "Cold open")


@pytest.fixture
async def semantic_memory(db384: Database) -> CampaignMemory:
    """Campaign 'ashfall' with a session 's1', in a database for real 384-d embeddings."""
    return await _campaign(db384, "ashfall", "Ashfall", "The Red Kettle")


@pytest.fixture
def db_dsn(db: Database) -> str:
    return db.location.dsn


@pytest.fixture(scope="session")
def offline_embedder() -> LocalMiniLMEmbedder:
    """The offline model, loaded once per test run."""
    return LocalMiniLMEmbedder()


SeedRecipe = Callable[[CampaignMemory], Awaitable[None]]


def made_once(
    server: PostgresForTests, build: Callable[[str], Awaitable[None]], shared_as: str | None
) -> str:
    """The name of a database `build` makes under the name it is given. `shared_as` names a
    database the run's workers share (the first to ask makes it, the others wait for it and
    take the same): only for one every test reads through `read_only` or clones (CREATE
    DATABASE refuses a template anyone is connected to). None: one of this worker's own."""
    if shared_as is None or server.run_dir is None:
        name = f"glyphoxa_seeded_{uuid.uuid4().hex[:8]}"
        asyncio.run(build(name))
        return name
    name = f"glyphoxa_world_{hashlib.sha256(shared_as.encode()).hexdigest()[:12]}"
    with _turn(server.run_dir, name):
        if not asyncio.run(_exists(server.admin_dsn, name)):
            # Made under another name and renamed when whole, so no worker ever takes a
            # database whose making failed half-way.
            building = f"{name}_building"
            asyncio.run(_drop_database(server.admin_dsn, building))
            asyncio.run(build(building))
            asyncio.run(_admin(server.admin_dsn, f'ALTER DATABASE "{building}" RENAME TO "{name}"'))
    return name


def seeded_database(
    server: PostgresForTests,
    template: str,
    dimension: int,
    seed: SeedRecipe,
    *,
    shared_as: str | None = None,
) -> str:
    """A clone of `template` with campaign 'ashfall' and session 's1', seeded by `seed` once
    for the whole run (once for all its workers if `shared_as` names it: see `made_once`);
    its DSN. Tests read it through `read_only` and never write to it."""

    async def build(name: str) -> None:
        await _create_database(server.admin_dsn, name, template=template)
        pool = await asyncpg.create_pool(
            server.dsn(name), init=init_connection, min_size=1, max_size=2
        )
        try:
            database = Database(pool, DatabaseLocation(server.dsn(name), name), dimension)
            await seed(await _campaign(database, "ashfall", "Ashfall", "The Red Kettle"))
        finally:
            await pool.close()

    return server.dsn(made_once(server, build, shared_as))


@contextlib.asynccontextmanager
async def read_only(
    dsn: str, dimension: int, campaign: str = "ashfall"
) -> AsyncIterator[CampaignMemory]:
    """A campaign ('ashfall' unless told) of a seeded database, on connections that refuse
    every write, so a test that would change what the others read fails instead."""
    pool = await asyncpg.create_pool(
        dsn,
        min_size=1,
        max_size=4,
        init=init_connection,
        reset=keep_session,
        server_settings={"default_transaction_read_only": "on"},
    )
    try:
        yield CampaignMemory(Database(pool, DatabaseLocation(dsn, "seeded"), dimension), campaign)
    finally:
        await pool.close()


@pytest.fixture(scope="session")
def village_dsn(test_server: PostgresForTests) -> str:
    """The village (tests/storage/graph_fixtures.py), seeded once for the run."""
    return seeded_database(
        test_server, test_server.template, TEST_EMBEDDING_DIM, build_village, shared_as="village"
    )


async def seed_spoken_village(memory: CampaignMemory, embedder: LocalMiniLMEmbedder) -> None:
    """The village, its two sessions and its facts, embedded with the offline model."""
    await build_village(memory)
    await load_sessions(memory, embedder)
    await load_facts(memory, embedder)


@pytest.fixture(scope="session")
def spoken_village_dsn(test_server: PostgresForTests, offline_embedder: LocalMiniLMEmbedder) -> str:
    """The spoken village, seeded once for the run."""

    async def seed(memory: CampaignMemory) -> None:
        await seed_spoken_village(memory, offline_embedder)

    return seeded_database(
        test_server, test_server.template_384, 384, seed, shared_as="spoken village"
    )


@pytest.fixture(scope="session")
def red_team_dsn(test_server: PostgresForTests, offline_embedder: LocalMiniLMEmbedder) -> str:
    """The sample campaign after sessions that talk about its secrets
    (tests/server/red_team_world.py), seeded once for the run."""
    from tests.server import red_team_world

    async def seed(memory: CampaignMemory) -> None:
        await red_team_world.build(memory, offline_embedder)

    return seeded_database(test_server, test_server.template_384, 384, seed, shared_as="red team")
