"""The seeded saga (tests/storage/saga_fixtures.py), cloned for each test that writes."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder
from tests.conftest import DatabaseFactory, PostgresForTests
from tests.storage.saga_fixtures import clone_of, saga_dsn


@pytest.fixture(scope="session")
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


@pytest.fixture(scope="session")
def seeded(test_server: PostgresForTests, embedder: WordLlamaEmbedder) -> str:
    return saga_dsn(test_server, embedder)


@pytest.fixture
async def saga(databases: DatabaseFactory, seeded: str) -> AsyncIterator[Database]:
    async with clone_of(databases, seeded) as db:
        yield db
