from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_mcp.domain.models import NewEntry
from glyphoxa_mcp.pipeline.chunking import ChunkingPolicy
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.storage.graph_fixtures import build_village


@pytest.mark.slow
async def test_processing_links_known_entities_and_is_idempotent(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await build_village(semantic_memory)
    start = datetime(2026, 3, 1, 19, tzinfo=UTC)
    lines = [
        "Grimjaw waves from the forge.",
        "The blacksmith looks tired.",
        "Rain again.",
        "We should visit the Red Kettle.",
        "Is Vask in town?",
    ]
    await semantic_memory.log.append_many(
        "s1",
        [
            NewEntry(
                speaker_id="gm", speaker_name="DM", text=t, spoken_at=start + timedelta(seconds=i)
            )
            for i, t in enumerate(lines)
        ],
    )
    policy = ChunkingPolicy(max_lines=3, overlap_lines=1)
    report = await process_session(semantic_memory, offline_embedder, "s1", policy)
    again = await process_session(semantic_memory, offline_embedder, "s1", policy)
    assert report.passages == again.passages == 2
    found = await semantic_memory.index.nearest((await offline_embedder.embed(["forge"]))[0], k=10)
    assert len(found) == 2
    tags = {m.chunk.content.splitlines()[0]: m.chunk.entity_ids for m in found}
    assert tags["DM: Grimjaw waves from the forge."] == ("grimjaw",)
    assert set(tags["DM: Rain again."]) == {"red-kettle", "vask"}
    assert sorted(len(m.chunk.entry_ids) for m in found) == [3, 3]
    # The session's summary lists the entities its passages name, counted once stored.
    involved = {e.id for e in await semantic_memory.queries.session_entities("s1")}
    assert {"grimjaw", "red-kettle", "vask"} <= involved
