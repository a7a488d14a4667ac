from __future__ import annotations

import asyncpg
import pytest

from glyphoxa_mcp.bench import bulk_loader
from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID
from glyphoxa_mcp.bench.ingestion import (
    SESSION_PREFIX,
    forget_ingested,
    measure_ingestion,
    new_sessions,
    storage_alone,
)
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.bench.test_dataset import tiny

# Loads a generated dataset with COPY, as the bench does before it measures.
pytestmark = pytest.mark.e2e


async def test_a_load_puts_every_row_in_the_database(db256: Database) -> None:
    data, dsn = tiny(), db256.location.dsn
    assert await bulk_loader.loaded(dsn, data) is bulk_loader.Loaded.MISSING
    timings = await bulk_loader.load(dsn, data, lambda _: None)
    assert timings.total_s >= timings.chunks_s
    counts = await bulk_loader.row_counts(dsn)
    expected = data.counts()
    assert counts == {
        "sessions": expected["sessions"],
        "entities": expected["entities"],
        "relationships": expected["relationships"],
        "facts": expected["facts"],
        "scenes": expected["scenes"],
        "session_entries": expected["entries"],
        "chunks": expected["chunks"],
    }
    assert await bulk_loader.loaded(dsn, data) is bulk_loader.Loaded.SAME
    assert await bulk_loader.loaded(dsn, tiny(2)) is bulk_loader.Loaded.OTHER


async def test_loaded_rows_read_back_through_the_stores(db256: Database) -> None:
    data = tiny()
    await bulk_loader.load(db256.location.dsn, data, lambda _: None)
    memory = CampaignMemory(db256, CAMPAIGN_ID)
    npc = await memory.graph.get_entity(data.bench_npc)
    assert npc.name == next(e.name for e in data.entities if e.id == data.bench_npc)
    restricted = next(e for e in data.entities if e.known_by)
    visibility = (await memory.graph.get_entity(restricted.id)).visibility
    assert (visibility.secret, visibility.known_by) == (restricted.secret, restricted.known_by)
    [chunk] = await memory.index.get_many([1])
    entries = await memory.log.get_many(list(chunk.entry_ids))
    assert chunk.content == "\n".join(f"{e.speaker_name}: {e.text}" for e in entries)
    nearest = await memory.index.nearest(data.chunk_vectors[0].tolist(), k=1)
    assert nearest[0].chunk.content == data.chunks[0].content
    facts = await memory.graph.current_facts()
    assert facts[0].provenance.session_id == data.facts[0].session_id
    # Each session's summary lists the entities its passages name, as after `process`.
    first = data.chunks[0].session_id
    named = {i for c in data.chunks if c.session_id == first for i in c.entity_ids}
    assert named and named <= {e.id for e in await memory.queries.session_entities(first)}


async def test_the_loaded_campaign_is_witnessed_and_each_line_heard_by_its_scene(
    db256: Database,
) -> None:
    data = tiny()
    await bulk_loader.load(db256.location.dsn, data, lambda _: None)
    assert (
        await db256.pool.fetchval("SELECT knowledge FROM campaigns WHERE id = $1", CAMPAIGN_ID)
        == "witnessed"
    )
    heard = {
        row["source_key"]: row["heard_by"]
        for row in await db256.pool.fetch(
            "SELECT source_key, heard_by FROM session_entries WHERE campaign_id = $1",
            CAMPAIGN_ID,
        )
    }
    for entry in data.entries:
        *_, scene = (
            s
            for s in data.scenes
            if s.session_id == entry.session_id and s.started_at <= entry.spoken_at
        )
        assert heard[entry.source_key] == list(scene.present)
    # Passages too: the companion reads every one, the benchmarked NPC some.
    passages = await db256.pool.fetch(
        "SELECT heard_by FROM chunks WHERE campaign_id = $1", CAMPAIGN_ID
    )
    assert all(data.companion_npc in row["heard_by"] for row in passages)
    readable = sum(data.bench_npc in row["heard_by"] for row in passages)
    assert 0 < readable < len(passages)


async def test_an_unfinished_load_is_never_taken_for_the_dataset(db256: Database) -> None:
    data, dsn = tiny(), db256.location.dsn
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(
            "INSERT INTO campaigns (id, name) VALUES ($1, $2)",
            CAMPAIGN_ID,
            bulk_loader.LOADING_PREFIX + data.spec.fingerprint,
        )
    finally:
        await conn.close()
    assert await bulk_loader.loaded(dsn, data) is bulk_loader.Loaded.OTHER
    await bulk_loader.delete_campaign(dsn)
    assert await bulk_loader.loaded(dsn, data) is bulk_loader.Loaded.MISSING


async def test_ingestion_goes_through_the_pipeline_and_is_forgotten_after(
    db256: Database,
) -> None:
    data, dsn = tiny(), db256.location.dsn
    await bulk_loader.load(dsn, data, lambda _: None)
    before = await bulk_loader.row_counts(dsn)
    sessions = new_sessions(data, 30)
    assert [len(s) for s in sessions] == [30]
    result = await measure_ingestion(db256, sessions, WordLlamaEmbedder())
    assert (result.utterances, result.sessions) == (30, 1)
    assert result.passages >= 5 and result.embedder == "wordllama-l2-supercat-256"
    assert 0 < result.embedding_s <= result.process_s
    assert result.utterances_per_s < result.utterances_per_s_without_embedding
    # The embedder alone, on the very passages it embedded, in the same run.
    assert result.embedder_alone_s > 0 and result.embedder_passages_per_s > 0
    assert result.meets == (result.embedder_share >= 0.5)
    assert result.embedder_share == pytest.approx(
        result.utterances_per_s / result.embedder_passages_per_s, abs=0.01
    )
    assert result.embedding_time_share == pytest.approx(
        result.embedder_alone_s / (result.ingest_s + result.process_s), abs=0.01
    )
    # The floor stored the same rows again and took them back.
    assert result.storage_alone_s > 0
    assert result.storage_alone_share == pytest.approx(
        result.utterances / result.storage_alone_s / result.embedder_passages_per_s, abs=0.01
    )
    # It copies every line and passage ingested, and what it copied is gone again.
    again = await storage_alone(db256, CAMPAIGN_ID, SESSION_PREFIX)
    assert (again.lines, again.passages) == (30, result.passages) and again.seconds > 0
    during = await bulk_loader.row_counts(dsn)
    assert during["session_entries"] == before["session_entries"] + 30
    assert during["chunks"] == before["chunks"] + result.passages
    assert during["sessions"] == before["sessions"] + 1
    await forget_ingested(dsn)
    assert await bulk_loader.row_counts(dsn) == before


@pytest.mark.parametrize("count", [1, 1001])
def test_new_sessions_are_at_most_a_thousand_utterances(count: int) -> None:
    sessions = new_sessions(tiny(), count)
    assert sum(map(len, sessions)) == count and max(map(len, sessions)) <= 1000
