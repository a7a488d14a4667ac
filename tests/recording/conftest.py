from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import pytest

from glyphoxa_mcp.app import App
from glyphoxa_mcp.config import Settings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.recording.recorder import Recorder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.storage.graph_fixtures import build_village


@pytest.fixture
async def village(semantic_memory: CampaignMemory) -> CampaignMemory:
    """Campaign 'ashfall' with the village graph and an empty session 's1'."""
    await build_village(semantic_memory)
    return semantic_memory


@pytest.fixture
def app(db384: Database, offline_embedder: LocalMiniLMEmbedder) -> App:
    """The application over the test's database, offline (no LLM)."""
    return App(Settings(), db384, offline_embedder, chat=None)


@contextlib.asynccontextmanager
async def recording(app: App) -> AsyncIterator[Recorder]:
    """A recorder whose background work runs inside the block (a task group cannot span a
    fixture's setup and teardown, which run in different tasks)."""
    async with anyio.create_task_group() as tasks:
        yield Recorder(app, tasks)
        tasks.cancel_scope.cancel()
