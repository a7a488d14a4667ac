"""The floors and the rankings' peers, learned and run once against a tiny generated campaign:
each floor reads the rows its tool returned, and each ranking row runs."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp.client import Client

from glyphoxa_mcp.bench import bulk_loader, peers
from glyphoxa_mcp.bench.dataset import Dataset
from glyphoxa_mcp.bench.floors import (
    CHUNKS_BY_ID,
    ENTITIES_BY_ID,
    ENTRIES_BY_ID,
    first_sets,
    floor_operations,
    learn_reads,
)
from glyphoxa_mcp.bench.operations import (
    HOT_RESOURCE,
    MEANING_FLOOR,
    MEANING_LEG,
    QUERY_ENTITIES,
    SEARCH_FACTS,
    SEARCH_SESSIONS,
    SESSION_SUMMARY,
    TANTIVY_PEER,
    WORD_LEG,
    WORD_PEER,
    BenchContext,
    PrecomputedEmbedder,
    floor_name,
)
from glyphoxa_mcp.bench.timing import measure
from glyphoxa_mcp.bench.vectors import DIMENSION
from glyphoxa_mcp.bench.workload import Workload, build_workload
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.bench.test_dataset import tiny

# Loads a generated dataset with COPY, as the bench does before it measures.
pytestmark = pytest.mark.e2e

OFFERED = {QUERY_ENTITIES, SESSION_SUMMARY, SEARCH_FACTS, SEARCH_SESSIONS, HOT_RESOURCE}


async def _loaded(db: Database) -> Dataset:
    data = tiny()
    await bulk_loader.load(db.location.dsn, data, lambda _: None)
    return data


@contextlib.asynccontextmanager
async def _client(db: Database, workload: Workload) -> AsyncIterator[Client]:
    memory = CampaignMemory(db, "bench")
    view = View(memory, workload.npc_id, PrecomputedEmbedder(workload.query_vectors, DIMENSION))
    state = ServerState(view, tier_policy(Tier.DEEP, 60_000))
    async with Client(build_server(state), raise_exceptions=True) as client:
        yield client


async def test_each_floor_reads_the_rows_its_tool_returned_and_runs(db256: Database) -> None:
    data = await _loaded(db256)
    # The first six argument sets of each tool: enough to learn from, quick to call.
    workload = first_sets(build_workload(data, data.bench_npc), 6)
    async with _client(db256, workload) as client:
        learned = await learn_reads(client, db256, workload, OFFERED)
        assert set(learned) == OFFERED
        assert all(len(learned[name]) == 6 for name in OFFERED - {HOT_RESOURCE})
        # The NPC's one hot context, and the statements that read it.
        [hot] = learned[HOT_RESOURCE]
        entities: list[Any] = next(args[1] for sql, args in hot if sql == ENTITIES_BY_ID)
        assert data.bench_npc in entities
        # A search's floor reads the lines it returned and the passages they came from.
        chunk_reads = [
            args[1]
            for reads in learned[SEARCH_SESSIONS]
            for sql, args in reads
            if sql == CHUNKS_BY_ID
        ]
        entry_reads = [
            args[1]
            for reads in learned[SEARCH_SESSIONS]
            for sql, args in reads
            if sql == ENTRIES_BY_ID
        ]
        assert any(chunk_reads) and any(entry_reads)
        floors = await floor_operations(client, db256, workload, OFFERED, calls=6)
    assert [op.name for op in floors] == [floor_name(name) for name in learned]
    for operation in floors:
        timed = await measure(operation, samples=6, warmup=0)
        assert len(timed.around) == 6


async def test_the_rankings_and_their_floor_and_peer_run_on_the_same_queries(
    db256: Database,
) -> None:
    data = await _loaded(db256)
    workload = build_workload(data, None)
    context = BenchContext(
        db=db256,
        dataset=data,
        embedder=PrecomputedEmbedder(workload.query_vectors, DIMENSION),
        queries=workload.queries,
        session_searches=workload.search_sessions[:4],
        query_vectors=workload.query_vectors,
    )
    operations = await peers.ranking_operations(context)
    assert [op.name for op in operations] == [
        WORD_LEG,
        WORD_PEER,
        TANTIVY_PEER,
        MEANING_LEG,
        MEANING_FLOOR,
    ]
    for operation in operations:
        timed = await measure(operation, samples=4, warmup=0)
        assert len(timed.around) == 4
