from __future__ import annotations

import pytest

from glyphoxa_mcp.bench import bulk_loader
from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID
from glyphoxa_mcp.bench.scene_change import measure_scene_changes
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.bench.test_dataset import tiny

# Changes who is present in the scene being played, as the bench does after it measures.
pytestmark = pytest.mark.e2e


async def test_each_change_of_presence_reaches_the_npc_and_the_scene_is_put_back(
    db256: Database,
) -> None:
    data = tiny()
    await bulk_loader.load(db256.location.dsn, data, lambda _: None)
    memory = CampaignMemory(db256, CAMPAIGN_ID)
    session = data.sessions[-1].id
    before = await memory.scenes.of_session(session)
    # Out, in, out, in: each change checked to show in the NPC's hot context.
    result = await measure_scene_changes(db256, data, WordLlamaEmbedder(), 4)
    assert (result.changes, result.session_id) == (4, session)
    assert result.session_lines == sum(e.session_id == session for e in data.entries)
    for summary in (result.change, result.notified, result.read, result.hear_scene):
        assert summary.samples == 4 and summary.min_ms >= 0
    assert result.notified.p50_ms <= result.read.p50_ms
    assert await memory.scenes.of_session(session) == before
