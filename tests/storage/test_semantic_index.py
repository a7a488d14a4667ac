from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_mcp.concurrency import concurrently
from glyphoxa_mcp.domain.models import NewChunk, NewSession, SearchFilters
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.storage.memory import CampaignMemory

START = datetime(2026, 3, 14, 19, 0, tzinfo=UTC)


def chunk(content: str, embedding: list[float], minute: int = 0, **tags: object) -> NewChunk:
    return NewChunk(
        session_id=tags.pop("session_id", "s1"),
        content=content,
        embedding=embedding,
        started_at=START + timedelta(minutes=minute),
        ended_at=START + timedelta(minutes=minute + 2),
        **tags,
    )


CHUNKS = [
    chunk("Mira: the caravan went north", [1, 0, 0, 0], 0, speaker_ids=("mira",)),
    chunk("Grimjaw: the bridge is closed", [0.9, 0.1, 0, 0], 10, npc_ids=("grimjaw",)),
    chunk("Tomas: we buy rope", [0, 1, 0, 0], 20, speaker_ids=("tomas",)),
    chunk("Mira: the moon is red", [0, 0, 1, 0], 30, speaker_ids=("mira",), entity_ids=("moon",)),
]


async def test_nearest_orders_by_cosine_distance(memory: CampaignMemory) -> None:
    await memory.index.upsert(CHUNKS)
    found = await memory.index.nearest([1, 0.05, 0, 0], k=3)
    assert [m.chunk.content for m in found] == [
        CHUNKS[0].content,
        CHUNKS[1].content,
        CHUNKS[2].content,
    ]
    assert found[0].distance < found[1].distance < found[2].distance
    assert found[0].distance == pytest.approx(1 - 1 / (1 + 0.05**2) ** 0.5, abs=1e-6)


async def test_the_same_content_is_stored_once(memory: CampaignMemory) -> None:
    ids = await memory.index.upsert(CHUNKS)
    again = await memory.index.upsert([chunk("Mira:   the caravan went north", [0, 0, 0, 1])])
    assert again == [ids[0]]
    assert len(await memory.index.nearest([1, 0, 0, 0], k=10)) == len(CHUNKS)


async def test_ids_come_back_in_the_order_given_with_repeats_stored_once(
    memory: CampaignMemory,
) -> None:
    # Hash order differs from the order given, and the batch repeats one passage.
    batch = [CHUNKS[3], CHUNKS[0], chunk("Mira:  the moon is red", [0, 0, 1, 1]), CHUNKS[2]]
    ids = await memory.index.upsert(batch)
    assert ids[0] == ids[2] and len(set(ids)) == 3
    stored = {c.id: c.content for c in await memory.index.get_many(ids)}
    expected = [CHUNKS[3].content, CHUNKS[0].content, CHUNKS[3].content, CHUNKS[2].content]
    assert [stored[i] for i in ids] == expected
    # The first of the repeats is the one kept, tags and all.
    [moon] = await memory.index.get_many([ids[0]])
    assert moon.entity_ids == ("moon",)


async def test_writers_storing_the_same_passages_at_once_agree(memory: CampaignMemory) -> None:
    batches = [CHUNKS, list(reversed(CHUNKS)), CHUNKS[1:] + CHUNKS[:1]]
    results = await concurrently(*(functools.partial(memory.index.upsert, b) for b in batches))
    by_content = [
        dict(zip((c.content for c in b), ids, strict=True))
        for b, ids in zip(batches, results, strict=True)
    ]
    assert by_content[0] == by_content[1] == by_content[2]
    assert len(await memory.index.nearest([1, 0, 0, 0], k=10)) == len(CHUNKS)


async def test_chunks_keep_their_tags_and_entry_ids(memory: CampaignMemory) -> None:
    [chunk_id] = await memory.index.upsert(
        [chunk("Mira: hello", [1, 1, 0, 0], entry_ids=(4, 5, 6), topics=("greeting",))]
    )
    [stored] = await memory.index.get_many([chunk_id])
    assert stored.entry_ids == (4, 5, 6) and stored.topics == ("greeting",)
    assert stored.started_at == START and stored.ended_at == START + timedelta(minutes=2)


async def test_filters_apply_before_ranking(memory: CampaignMemory) -> None:
    await memory.sessions.upsert(NewSession(id="s2"))
    await memory.index.upsert(
        [*CHUNKS, chunk("Mira: s2 caravan", [1, 0, 0, 0], 99, session_id="s2")]
    )

    async def contents(**filters: object) -> list[str]:
        found = await memory.index.nearest([1, 0, 0, 0], SearchFilters(**filters), k=10)
        return [m.chunk.content for m in found]

    assert await contents(session_id="s2") == ["Mira: s2 caravan"]
    assert await contents(speaker_ids=("tomas",)) == [CHUNKS[2].content]
    assert await contents(npc_id="grimjaw") == [CHUNKS[1].content]
    # Time filters keep chunks whose span overlaps the range.
    window = await contents(
        after=START + timedelta(minutes=21), before=START + timedelta(minutes=31)
    )
    assert sorted(window) == sorted([CHUNKS[2].content, CHUNKS[3].content])


async def test_a_selective_filter_still_finds_far_away_matches(memory: CampaignMemory) -> None:
    # 300 chunks close to the query, one far away with the wanted tag: HNSW's candidate list
    # is exhausted by the close ones, so only the exact fallback can find it.
    crowd = [chunk(f"crowd {i}", [1, i / 1000, 0, 0], i % 50) for i in range(300)]
    far = chunk("the one", [0, 0, 0, 1], 5, npc_ids=("hermit",))
    await memory.index.upsert([*crowd, far])
    found = await memory.index.nearest([1, 0, 0, 0], SearchFilters(npc_id="hermit"), k=5)
    assert [m.chunk.content for m in found] == ["the one"]


async def test_campaigns_never_see_each_others_chunks(
    memory: CampaignMemory, other_campaign: CampaignMemory
) -> None:
    ids = await memory.index.upsert(CHUNKS)
    assert await other_campaign.index.nearest([1, 0, 0, 0], k=10) == []
    assert await other_campaign.index.get_many(ids) == []
    # The same content in another campaign is its own row.
    other_ids = await other_campaign.index.upsert([CHUNKS[0]])
    assert other_ids[0] not in ids


@pytest.mark.parametrize(
    ("vector", "problem"),
    [([1, 0, 0], "3 dimensions"), ([0, 0, 0, 0], "all zeros"), ([float("nan"), 0, 0, 1], "finite")],
)
async def test_unusable_vectors_are_refused(
    memory: CampaignMemory, vector: list[float], problem: str
) -> None:
    with pytest.raises(InvalidInputError, match=problem):
        await memory.index.nearest(vector)
    if problem == "3 dimensions":
        with pytest.raises(InvalidInputError, match=problem):
            await memory.index.upsert([chunk("wrong size", vector)])


async def test_words_rank_by_bm25_within_the_filters(memory: CampaignMemory) -> None:
    await memory.sessions.upsert(NewSession(id="s2"))
    await memory.index.upsert(
        [
            *CHUNKS,
            chunk("Mira: the caravan, the caravan, always the caravan", [0, 0, 0, 1], 40),
            chunk("Tomas: the caravan master sold us a lantern", [0, 1, 1, 0], 50),
            chunk("Grimjaw: rope for the caravan", [1, 1, 1, 1], 60, session_id="s2"),
        ]
    )
    found = await memory.index.search_text("caravan rope")
    # Both words first; then rope, the rarer word, over the caravan said three times.
    assert [m.chunk.content for m in found][:3] == [
        "Grimjaw: rope for the caravan",
        "Tomas: we buy rope",
        "Mira: the caravan, the caravan, always the caravan",
    ]
    assert [m.rank for m in found] == sorted((m.rank for m in found), reverse=True)
    only_s2 = await memory.index.search_text("caravan rope", SearchFilters(session_id="s2"))
    assert [m.chunk.session_id for m in only_s2] == ["s2"]
