"""A campaign taken along (desk/archive_actions.py): the sample campaign, after sessions that
talk about its secrets (tests/server/red_team_world.py), exported, imported into an empty
database and exported again gives the same file, and every tool and resource answers the
DM and each NPC there as it did before."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from mcp.client import Client

from glyphoxa_mcp.db.database import Database, DatabaseLocation, init_connection, keep_session
from glyphoxa_mcp.desk.archive_actions import export_campaign, import_campaign
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import read_only, unhurried
from tests.server import red_team_world as world
from tests.server.red_team_attempts import attempts
from tests.server.test_red_team import NPCS

# A whole campaign through every tool and resource, twice, for the DM and eight NPCs.
pytestmark = pytest.mark.slow
RESOURCES = ("read ", "compl")


@contextlib.asynccontextmanager
async def writable(dsn: str) -> AsyncIterator[Database]:
    """The seeded database on connections that may make temporary tables (an export's
    numbering of ids); the export writes nothing else."""
    pool = await asyncpg.create_pool(
        dsn, min_size=1, max_size=2, init=init_connection, reset=keep_session
    )
    try:
        yield Database(pool, DatabaseLocation(dsn, "red team"), 384)
    finally:
        await pool.close()


async def archive_of(db: Database, path: Path) -> bytes:
    path.write_bytes(b"".join([piece async for piece in export_campaign(db, world.CAMPAIGN)]))
    return path.read_bytes()


@contextlib.asynccontextmanager
async def client_over(
    memory: CampaignMemory, embedder: LocalMiniLMEmbedder, npc: str | None
) -> AsyncIterator[Client]:
    view = await View.open(memory, npc, embedder)
    server = build_server(
        ServerState(view, unhurried(Tier.DEEP)), subscriptions=HotSubscriptions(memory, npc)
    )
    async with Client(server) as client:
        yield client


async def test_every_tool_answers_every_viewer_the_same_after_an_export_and_an_import(
    red_team_dsn: str, db384: Database, offline_embedder: LocalMiniLMEmbedder, tmp_path: Path
) -> None:
    async with writable(red_team_dsn) as original:
        archive = await archive_of(original, tmp_path / "demo.glyphoxa.jsonl.gz")

    restored = await import_campaign(db384, str(tmp_path / "demo.glyphoxa.jsonl.gz"))

    assert restored.campaign_id == world.CAMPAIGN and not restored.vectors_made_again
    assert await archive_of(db384, tmp_path / "again.glyphoxa.jsonl.gz") == archive
    differences = []
    calls = 0
    async with read_only(red_team_dsn, 384, world.CAMPAIGN) as before:
        after = CampaignMemory(db384, world.CAMPAIGN)
        for viewer in [None, *NPCS]:
            tried = attempts(viewer or "berrit")
            if viewer is not None:
                # Every tool with a share of the arguments, every resource: the DM's run
                # below tries them all.
                tried = [a for n, a in enumerate(tried) if n % 4 == 0 or a.label[:5] in RESOURCES]
            async with (
                client_over(before, offline_embedder, viewer) as old,
                client_over(after, offline_embedder, viewer) as new,
            ):
                for attempt in tried:
                    calls += 1
                    if await attempt.run(old) != await attempt.run(new):
                        differences.append(f"{viewer or 'dm'}: {attempt.label}")
    assert calls > 500 and differences == []
