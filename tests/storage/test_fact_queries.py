from __future__ import annotations

import math
import random
from datetime import UTC, datetime
from typing import Any

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewFact, NewSession, Visibility
from glyphoxa_mcp.storage import fact_queries
from glyphoxa_mcp.storage.fact_queries import FactFilters
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.sql_parts import Params
from tests.storage.graph_fixtures import build_village

NONE = FactFilters()


async def add_timed_facts(memory: CampaignMemory) -> None:
    await memory.sessions.upsert(NewSession(id="s2"))
    for day, text, session, vector in [
        (2, "The bridge collapsed in the storm.", "s1", [1, 0, 0, 0]),
        (5, "The bridge was rebuilt by the Town Watch.", "s2", [0.9, 0.1, 0, 0]),
        (9, "A storm flooded the lower town.", "s2", [0, 1, 0, 0]),
    ]:
        await memory.graph.upsert_fact(
            NewFact(
                subject_id="town-watch",
                text=text,
                story_day=day,
                session_id=session,
                occurred_at=datetime(2026, 3, day, 20, tzinfo=UTC),
                embedding=vector,
            )
        )


async def test_text_search_ranks_by_relevance(memory: CampaignMemory) -> None:
    await build_village(memory)
    await add_timed_facts(memory)
    found = await memory.facts.by_text("bridge storm", NONE, k=10, npc_id=None)
    assert found[0].fact.text == "The bridge collapsed in the storm."
    assert [f.score for f in found] == sorted((f.score for f in found), reverse=True)


async def test_a_rare_word_outranks_a_repeated_common_one(memory: CampaignMemory) -> None:
    # BM25: "bridge" is in most facts, "ferry" in one; ts_rank_cd ranked the fact saying
    # "bridge" twice first.
    await build_village(memory)
    for number in range(6):
        await memory.graph.upsert_fact(NewFact(text=f"Bridge toll number {number} was paid."))
    await memory.graph.upsert_fact(NewFact(text="The bridge, the old bridge, creaked."))
    await memory.graph.upsert_fact(NewFact(text="A ferry crossed at dawn."))
    found = await memory.facts.by_text("bridge ferry", NONE, k=3, npc_id=None)
    assert found[0].fact.text == "A ferry crossed at dawn."
    pool = memory.graph._pool
    counted, stored = await pool.fetchrow(
        "SELECT (SELECT row_count FROM campaign_row_counts WHERE campaign_id = $1 "
        "AND table_name = 'facts'), (SELECT count(*) FROM facts WHERE campaign_id = $1)",
        memory.campaign_id,
    )
    assert counted == stored >= 8


async def test_story_and_real_time_filters(memory: CampaignMemory) -> None:
    await build_village(memory)
    await add_timed_facts(memory)

    async def texts(**filters: object) -> list[str]:
        found = await memory.facts.by_text(
            "bridge storm watch", FactFilters(**filters), k=10, npc_id=None
        )
        return sorted(f.fact.text for f in found)

    assert await texts(story_after=3, story_before=9) == [
        "The bridge was rebuilt by the Town Watch."
    ]
    assert await texts(real_before=datetime(2026, 3, 3, tzinfo=UTC)) == [
        "The bridge collapsed in the storm."
    ]
    assert await texts(session_id="s2", story_after=6) == ["A storm flooded the lower town."]
    assert await texts(subject_ids=("grimjaw",)) == ["Grimjaw once served in the Town Watch."]


async def test_vector_search_finds_meaning_and_respects_filters(memory: CampaignMemory) -> None:
    await build_village(memory)
    await add_timed_facts(memory)
    found = await memory.facts.by_vector([1, 0.05, 0, 0], NONE, k=2, npc_id=None)
    assert [f.fact.story_day for f in found] == [2, 5]
    assert found[0].score > found[1].score
    later = await memory.facts.by_vector([1, 0, 0, 0], FactFilters(story_after=6), k=2, npc_id=None)
    assert [f.fact.story_day for f in later] == [9]


async def test_facts_hidden_from_the_npc_never_match(memory: CampaignMemory) -> None:
    await build_village(memory)
    await memory.graph.upsert_fact(
        NewFact(
            subject_id="red-kettle",
            text="The Red Kettle hides a smugglers' tunnel.",
            visibility=Visibility(secret=True),
            embedding=[0, 0, 1, 0],
        )
    )
    as_mira = await memory.facts.by_text("cult kettle tunnel anvil", NONE, k=10, npc_id="mira")
    assert as_mira == []
    assert await memory.facts.by_vector([0, 0, 1, 0], NONE, k=5, npc_id="mira") == []
    as_vask = await memory.facts.by_text("cult", NONE, k=10, npc_id="vask")
    assert [f.fact.subject_id for f in as_vask] == ["cult"]
    as_dm = await memory.facts.by_text("kettle tunnel anvil", NONE, k=10, npc_id=None)
    assert len(as_dm) == 3


async def test_a_narrow_span_is_ranked_exactly_without_the_vector_index(
    memory: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DM's filter that narrows the facts through an index to a few of them (here a span
    of story days) ranks those exactly, read through that index: the vector index, which
    cannot narrow, would read thousands of entries to find a few facts among many. A wide
    filter still asks the vector index, and so does every NPC's search, whose way must not
    depend on facts hidden from it. Either way the ranking is by distance."""
    await build_village(memory)
    rng = random.Random(4)
    vectors = {day: [rng.uniform(-1, 1) for _ in range(4)] for day in range(1, 31)}
    for day, vector in vectors.items():
        await memory.graph.upsert_fact(
            NewFact(
                subject_id="town-watch",
                text=f"On day {day} the watch logged patrol {day}.",
                story_day=day,
                visibility=Visibility(secret=day % 5 == 0),
                embedding=vector,
            )
        )
    monkeypatch.setattr(fact_queries, "FEW_NARROWED", 8)
    asked_the_index = []
    through_the_index = fact_queries.nearest_rows

    async def nearest_rows(*args: Any, **kwargs: Any) -> Any:
        asked_the_index.append(True)
        return await through_the_index(*args, **kwargs)

    monkeypatch.setattr(fact_queries, "nearest_rows", nearest_rows)
    query = [1.0, 0.2, -0.3, 0.5]

    def nearest(days: range, hidden: bool) -> list[int]:
        shown = [d for d in days if not (hidden and d % 5 == 0)]
        return sorted(shown, key=lambda d: _cosine_distance(query, vectors[d]))[:5]

    async def days(after: int, npc: str | None) -> list[int]:
        found = await memory.facts.by_vector(query, FactFilters(story_after=after), k=5, npc_id=npc)
        return [m.fact.story_day for m in found]

    assert await days(24, None) == nearest(range(24, 31), hidden=False)
    assert asked_the_index == []
    assert await days(32, None) == []
    assert asked_the_index == []
    assert await days(2, None) == nearest(range(2, 31), hidden=False)
    assert asked_the_index == [True]
    for after in (24, 2):
        asked_the_index.clear()
        assert await days(after, "mira") == nearest(range(after, 31), hidden=True)
        assert asked_the_index == [True]


async def test_a_narrow_span_is_read_through_its_index_by_a_plan_for_any_span(
    db: Database, memory: CampaignMemory
) -> None:
    """PostgreSQL may keep one plan for every span once it has planned five: that plan,
    made for no span in particular, still reads the span through its index, not the whole
    table (the DM's search as `by_vector` builds it)."""
    params = Params(memory.campaign_id)
    narrowing = fact_queries._narrowing(FactFilters(story_after=3), params)
    vector = params.add([1.0, 0.0, 0.0, 0.0])
    conditions = ["f.campaign_id = $1", "f.embedding IS NOT NULL", *fact_queries._known(None)]
    sql = fact_queries._exact_if_few([*conditions, *narrowing], narrowing, vector, params.add(5))
    async with db.pool.acquire() as conn, conn.transaction():
        await conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        await conn.execute(f"PREPARE span AS {sql}")
        plan = await conn.fetch(f"EXPLAIN EXECUTE span('{memory.campaign_id}', 3, '[1,0,0,0]', 5)")
    text = "\n".join(row[0] for row in plan)
    assert "facts_by_story_day" in text
    assert "Seq Scan on facts" not in text


def _cosine_distance(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return 1 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))
