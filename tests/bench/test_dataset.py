from __future__ import annotations

import collections
import functools
from datetime import datetime

import numpy as np
import pytest
from pydantic import ValidationError

from glyphoxa_mcp.bench.dataset import Dataset, generate
from glyphoxa_mcp.bench.spec import REFERENCE_ENTRIES, DatasetSpec
from glyphoxa_mcp.bench.vectors import DIMENSION
from glyphoxa_mcp.bench.workload import build_workload, misspell
from glyphoxa_mcp.domain.models import Entry
from glyphoxa_mcp.domain.vocabulary import EntityType, is_bidirectional
from glyphoxa_mcp.pipeline.chunking import passages
from glyphoxa_mcp.storage.semantic_index import content_hash

TINY = DatasetSpec(sessions=3, entries=600, entities=80, relationships=300, facts=150)


@functools.cache
def tiny(seed: int = 1) -> Dataset:
    return generate(TINY.model_copy(update={"seed": seed}))


def test_the_same_spec_generates_the_same_campaign() -> None:
    first, again = tiny(), generate(TINY)
    assert first.entities == again.entities
    assert first.relationships == again.relationships
    assert first.entries == again.entries and first.chunks == again.chunks
    assert first.facts == again.facts and first.sessions == again.sessions
    assert np.array_equal(first.chunk_vectors, again.chunk_vectors)
    assert np.array_equal(first.fact_vectors, again.fact_vectors)
    assert first.campaign_name == again.campaign_name


def test_another_seed_generates_another_campaign() -> None:
    first, other = tiny(1), tiny(2)
    assert [e.name for e in first.entities] != [e.name for e in other.entities]
    assert first.campaign_name != other.campaign_name


def test_sizes_are_the_spec_and_chunks_are_what_process_would_cut() -> None:
    data = tiny()
    assert len(data.sessions) == 3 and len(data.entries) == 600
    assert len(data.entities) == 80 and len(data.facts) == 150
    assert len(data.relationships) == 300
    assert data.chunk_vectors.shape == (len(data.chunks), DIMENSION)
    assert data.fact_vectors.shape == (150, DIMENSION)
    assert np.allclose(np.linalg.norm(data.chunk_vectors, axis=1), 1, atol=1e-5)
    for session in data.sessions:
        entries = [
            Entry.model_construct(
                id=i, speaker_name=e.speaker_name, text=e.text, spoken_at=e.spoken_at
            )
            for i, e in enumerate(data.entries)
            if e.session_id == session.id
        ]
        cut = [p.content for p in passages(entries)]
        assert [c.content for c in data.chunks if c.session_id == session.id] == cut


def test_every_reference_points_at_something_that_exists() -> None:
    data = tiny()
    ids = [e.id for e in data.entities]
    known = set(ids)
    sessions = {s.id for s in data.sessions}
    npcs = {e.id for e in data.entities if e.type is EntityType.NPC}
    assert len(known) == len(ids)
    assert len({e.name.casefold() for e in data.entities}) == len(ids)
    links = [(r.source_id, r.target_id, r.rel_type) for r in data.relationships]
    assert len(set(links)) == len(links)
    for r in data.relationships:
        assert {r.source_id, r.target_id} <= known and r.source_id != r.target_id
        assert r.provenance["session_id"] in (sessions | {None})
        if is_bidirectional(r.rel_type):
            assert (r.target_id, r.source_id, r.rel_type) in set(links)
    for row in (*data.entities, *data.relationships, *data.facts):
        assert set(row.known_by) <= npcs
    for fact in data.facts:
        assert fact.subject_id is None or fact.subject_id in known
        assert fact.session_id in sessions
    assert len({(f.subject_id, f.text) for f in data.facts}) == len(data.facts)
    for entry in data.entries:
        assert entry.session_id in sessions and set(entry.mentions) <= known
        assert entry.npc_id is None or entry.npc_id in npcs
    hashes = {content_hash(c.content) for c in data.chunks}
    assert len(hashes) == len(data.chunks)
    for chunk in data.chunks:
        covered = [data.entries[i] for i in chunk.entries]
        assert {e.session_id for e in covered} == {chunk.session_id}
        assert set(chunk.entity_ids) <= known


def test_what_was_learnt_in_a_session_is_about_who_and_what_was_there() -> None:
    data = tiny()
    there: dict[str, set[str]] = collections.defaultdict(set)
    for entry in data.entries:
        there[entry.session_id].update(entry.mentions)
    played = [r for r in data.relationships if r.provenance["session_id"]]
    assert played and len(played) < len(data.relationships)
    for r in played:
        assert {r.source_id, r.target_id} <= there[r.provenance["session_id"]]
    about_there = [f for f in data.facts if f.subject_id in there[f.session_id]]
    assert len(about_there) >= 0.75 * len(data.facts)
    # A session is about a bounded cast, not the whole campaign.
    for session in data.sessions:
        assert len(there[session.id]) < 0.8 * len(data.entities)


def test_the_benchmarked_npc_is_somewhere_speaks_and_knows_secrets() -> None:
    data = tiny()
    npc = data.bench_npc
    assert any(r.source_id == npc and r.rel_type == "LOCATED_AT" for r in data.relationships)
    last = data.sessions[-1].id
    assert any(e.npc_id == npc and e.session_id == last for e in data.entries)
    hidden = [row for row in (*data.entities, *data.relationships, *data.facts) if row.known_by]
    assert any(npc in row.known_by for row in hidden)
    assert any(row.secret for row in (*data.entities, *data.relationships, *data.facts))


def test_every_line_is_in_a_scene_and_the_benchmarked_npc_is_in_some_only() -> None:
    data = tiny(3)
    starts: dict[str, list[datetime]] = collections.defaultdict(list)
    for scene in data.scenes:
        starts[scene.session_id].append(scene.started_at)
    assert set(starts) == {s.id for s in data.sessions}
    assert all(times == sorted(times) and len(times) >= 2 for times in starts.values())
    # A session's first scene starts with its first line; every NPC speaks where present.
    present = {(s.session_id, s.started_at): s.present for s in data.scenes}
    for entry in data.entries:
        scene_start = max(t for t in starts[entry.session_id] if t <= entry.spoken_at)
        assert entry.npc_id is None or entry.npc_id in present[entry.session_id, scene_start]
    # The witness rule's filter is selective for the benchmarked NPC, and passes every line
    # for its companion.
    with_npc = [s for s in data.scenes if data.bench_npc in s.present]
    assert 0 < len(with_npc) < len(data.scenes) / 2
    assert all(data.companion_npc in s.present for s in data.scenes)
    assert all(s.present == tuple(sorted(s.present)) for s in data.scenes)
    # The session being played ends in a scene with the benchmarked NPC.
    assert data.bench_npc in data.scenes[-1].present
    assert data.scenes[-1].session_id == data.sessions[-1].id


def test_the_companion_is_told_exactly_what_the_benchmarked_npc_is_told() -> None:
    data = tiny()
    npc, companion = data.bench_npc, data.companion_npc
    assert npc != companion
    rows = (*data.entities, *data.relationships, *data.facts)
    assert all((npc in row.known_by) == (companion in row.known_by) for row in rows)
    assert any(npc in row.known_by for row in rows)
    assert not any(e.id in (npc, companion) and e.secret for e in data.entities)


def test_sessions_are_finished_and_summarised_but_the_one_being_played() -> None:
    *finished, current = tiny().sessions
    assert all(s.ended_at is not None and s.summary for s in finished)
    assert current.ended_at is None and current.summary is None


def test_the_reference_scale_and_explicit_counts() -> None:
    assert DatasetSpec.at_scale(1).entries == REFERENCE_ENTRIES
    small = DatasetSpec.at_scale(0.01, facts=7)
    assert (small.sessions, small.entries, small.entities, small.facts) == (2, 2000, 100, 7)


@pytest.mark.parametrize(
    ("sizes", "problem"),
    [
        ({"sessions": 10, "entries": 50}, "too few for 10 sessions"),
        ({"entities": 30, "relationships": 1000}, "too many for 30 entities"),
        ({"entities": 3}, "greater than or equal to 30"),
    ],
)
def test_impossible_sizes_are_refused(sizes: dict[str, int], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        DatasetSpec(**sizes)


def test_every_search_query_has_a_vector_and_scopes_ask_for_their_own_hot_context() -> None:
    data = tiny()
    dm, npc = build_workload(data, None), build_workload(data, data.bench_npc)
    for workload in (dm, npc):
        asked = [a["query"] for a in (*workload.search_facts, *workload.search_sessions)]
        assert set(asked) == set(workload.query_vectors)
        assert all(len(v) == DIMENSION for v in workload.query_vectors.values())
    assert npc.hot_uris == (f"glyphoxa://npc/{data.bench_npc}/hot",)
    assert len(set(dm.hot_uris)) > 1
    finished = len(data.sessions) - 1
    assert all(a.get("sessions_ago", 1) <= finished for a in dm.session_summary)
    kinds = collections.Counter(next(iter(a)) for a in dm.query_entities)
    assert {"name", "type", "related_to"} <= set(kinds)


def test_a_misspelling_changes_the_name_a_little() -> None:
    import random

    rng = random.Random(3)
    for _ in range(50):
        heard = misspell("Fenolin Valarrith", rng)
        assert heard != "Fenolin Valarrith" and abs(len(heard) - 17) <= 1
