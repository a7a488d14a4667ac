"""The desk over the sample campaign: its entities and rumours, its two sessions as the demo
processes and ends them, a held CSV import and an entity a session proposed. Seeded once per
run into a template database: a test that changes the campaign gets a clone of its own
(`desk`); one that only reads shares a copy over connections that refuse every write
(`reading_desk`)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import asyncpg
import httpx
import pytest

from glyphoxa_mcp.app import App
from glyphoxa_mcp.config import Settings
from glyphoxa_mcp.db.database import Database, DatabaseLocation, init_connection
from glyphoxa_mcp.demo import prepare
from glyphoxa_mcp.domain.models import NewEntity
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.finish import end_session
from glyphoxa_mcp.providers.embeddings import Embedder, offline_embedder
from glyphoxa_mcp.server.http_guard import HostRules
from glyphoxa_mcp.server.token_gate import TokenGate
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.web.browser_sessions import SignInLimits
from glyphoxa_mcp.web.desk_app import build_desk
from tests.conftest import (
    DatabaseFactory,
    PostgresForTests,
    _create_database,
    _database_from,
    made_once,
    read_only,
)

DIMENSION = 256
BASE_URL = "http://127.0.0.1:8766"
FORM_TOKEN = re.compile(r'name="form_token" value="([^"]+)"')


async def seed_desk(db: Database, embedder: Embedder) -> CampaignMemory:
    memory = await prepare(db, embedder, lambda _line: None)
    for session in ("session-1", "session-2"):  # summaries and episodes, as `session end` does
        await end_session(db, memory.campaign_id, session, embedder)
    await memory.pending.propose(
        "csv", "row-2", NewEntity(name="Harbour Master Ilse", type=EntityType.NPC)
    )
    await memory.pending.propose(
        "session", "session-2:the-ferryman", NewEntity(name="The Ferryman", type=EntityType.NPC)
    )
    return memory


@pytest.fixture(scope="session")
def desk_embedder() -> Embedder:
    return offline_embedder(DIMENSION)


@dataclass(frozen=True)
class DeskDatabases:
    template: str
    """Cloned for each test that writes; nothing connects to it after seeding."""
    shared_dsn: str
    """A copy the reading tests share."""


@pytest.fixture(scope="session")
def desk_databases(
    test_server: PostgresForTests, databases: DatabaseFactory, desk_embedder: Embedder
) -> Iterator[DeskDatabases]:
    async def seeded(name: str) -> None:
        await _create_database(test_server.admin_dsn, name, template=test_server.template_256)
        dsn = test_server.dsn(name)
        pool = await asyncpg.create_pool(dsn, init=init_connection, min_size=1, max_size=2)
        try:
            await seed_desk(Database(pool, DatabaseLocation(dsn, name), DIMENSION), desk_embedder)
        finally:
            await pool.close()

    template = made_once(test_server, seeded, shared_as="desk")

    async def copied(name: str) -> None:
        await _create_database(test_server.admin_dsn, name, template=template)

    shared = made_once(test_server, copied, shared_as="desk, for the reading tests")
    yield DeskDatabases(template, test_server.dsn(shared))
    if test_server.run_dir is None:
        # This worker's own (the run's shared ones go with its server). Through the factory:
        # after the clones it is still making of the template.
        databases.drop(template)
        databases.drop(shared)


@pytest.fixture
async def desk_db(
    databases: DatabaseFactory, desk_databases: DeskDatabases
) -> AsyncIterator[Database]:
    async with _database_from(databases, desk_databases.template, DIMENSION) as database:
        yield database


@pytest.fixture
async def shared_desk_db(desk_databases: DeskDatabases) -> AsyncIterator[Database]:
    async with read_only(desk_databases.shared_dsn, DIMENSION, "demo") as memory:
        yield memory.db


@dataclass
class DeskClient:
    """A browser's requests to the desk, in process: cookies kept, the form token sent."""

    http: httpx.AsyncClient
    db: Database
    desk: httpx.ASGITransport
    """The same desk, for another browser (`stranger`)."""

    def stranger(self) -> httpx.AsyncClient:
        """Another browser, without this one's cookie."""
        return httpx.AsyncClient(transport=self.desk, base_url=BASE_URL)

    @property
    def memory(self) -> CampaignMemory:
        return CampaignMemory(self.db, "demo")

    async def get(self, path: str, **kwargs: object) -> httpx.Response:
        return await self.http.get(path, **kwargs)  # type: ignore[arg-type]

    async def form_token(self, page: str = "/c/demo/review") -> str:
        found = FORM_TOKEN.search((await self.http.get(page)).text)
        assert found, f"no form on {page}"
        return found.group(1)

    async def post(
        self, path: str, data: dict[str, object], *, page: str = "/c/demo/review"
    ) -> httpx.Response:
        """The form as a page sends it (its token, `next` the page), the redirect followed."""
        fields = {"form_token": await self.form_token(page), "next": page, **data}
        return await self.http.post(path, data=fields, follow_redirects=True)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def desk_over(
    db: Database,
    embedder: Embedder,
    gate: TokenGate,
    sign_ins: SignInLimits | None = None,
    *,
    only_campaign: str | None = None,
) -> AsyncIterator[DeskClient]:
    asgi = build_desk(
        App(Settings(), db, embedder, chat=None),
        gate,
        HostRules(),
        only_campaign=only_campaign,
        sign_ins=sign_ins,
    )
    transport = httpx.ASGITransport(app=asgi)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
        yield DeskClient(http, db, transport)


@pytest.fixture
async def desk(desk_db: Database, desk_embedder: Embedder) -> AsyncIterator[DeskClient]:
    """The desk without auth (as on loopback), over a clone of the seeded campaign."""
    async with desk_over(desk_db, desk_embedder, TokenGate(None)) as client:
        yield client


@pytest.fixture
async def reading_desk(
    shared_desk_db: Database, desk_embedder: Embedder
) -> AsyncIterator[DeskClient]:
    """The desk without auth over the shared copy, which refuses every write."""
    async with desk_over(shared_desk_db, desk_embedder, TokenGate(None)) as client:
        yield client


@pytest.fixture
async def token_desk(desk_db: Database, desk_embedder: Embedder) -> AsyncIterator[DeskClient]:
    """The desk with token auth: a browser signs in with a DM token."""
    async with desk_over(desk_db, desk_embedder, TokenGate(AccessTokens(desk_db))) as client:
        yield client
