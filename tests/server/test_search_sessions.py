from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_mcp.domain.models import NewEntry, NewSession
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.server.conftest import Connect, call, call_error

TOOL = "memory.search_sessions"


@pytest.fixture
def connect_semantic(connect_spoken_village: Connect) -> Connect:
    """The shared village and its sessions, read only: most tests here only search."""
    return connect_spoken_village


async def test_meaning_finds_a_paraphrase(connect_semantic: Connect) -> None:
    async with connect_semantic() as client:
        result = await call(client, TOOL, query="Which town did the traders travel to?", top_k=3)
    top = next(hit for hit in result["results"][:2] if "Saltmere" in hit["text"])
    assert "meaning" in top["matched_by"]
    assert top["session_id"] == "s1" and top["session_title"] == "The Red Kettle"
    assert top["text"].startswith("Mira: ") and "\nGrimjaw: " in top["text"]
    assert len(top["entry_ids"]) == 2


async def test_live_entries_not_yet_chunked_are_found_by_words(connect_semantic: Connect) -> None:
    async with connect_semantic() as client:
        result = await call(client, TOOL, query="ferry at the old mill")
    ferry = "Grimjaw: The Town Watch keeps a ferry at the old mill."
    top = next(hit for hit in result["results"][:2] if hit["text"] == ferry)
    assert top["session_id"] == "s2" and top["matched_by"] == ["words"]
    assert top["entry_ids"] and top["started_at"] == top["ended_at"]


async def test_an_entry_inside_a_returned_passage_is_not_repeated(
    connect_semantic: Connect,
) -> None:
    async with connect_semantic() as client:
        result = await call(client, TOOL, query="forge a new sword promise", top_k=10)
    covered = [i for hit in result["results"] for i in hit["entry_ids"]]
    assert len(covered) == len(set(covered))


async def test_overlapping_passages_give_only_lines_not_given_before(
    connect_own_spoken_village: Connect,
    semantic_memory: CampaignMemory,
    offline_embedder: LocalMiniLMEmbedder,
) -> None:
    connect_semantic = connect_own_spoken_village
    start = datetime(2026, 3, 15, 19, 0, tzinfo=UTC)
    lines = [
        "The lighthouse keeper lost his lamp.",
        "Which lamp, the brass lamp?",
        "The brass lamp from the lighthouse, yes.",
        "We found a lamp in the lighthouse cellar.",
    ]
    await semantic_memory.sessions.upsert(NewSession(id="s3", title="Lamps"))
    await semantic_memory.log.append_many(
        "s3",
        [
            NewEntry(
                speaker_id="mira",
                speaker_name="Mira",
                text=text,
                spoken_at=start + timedelta(seconds=10 * i),
            )
            for i, text in enumerate(lines)
        ],
    )
    assert (await process_session(semantic_memory, offline_embedder, "s3")).passages == 2
    async with connect_semantic() as client:
        result = await call(client, TOOL, query="lighthouse brass lamp", session_id="s3")
    hits = result["results"]
    given = [i for hit in hits for i in hit["entry_ids"]]
    assert sorted(given) == sorted(set(given)) and len(given) == len(lines)
    assert [len(hit["text"].splitlines()) for hit in hits] == [len(h["entry_ids"]) for h in hits]
    assert sorted(line for hit in hits for line in hit["text"].splitlines()) == sorted(
        f"Mira: {text}" for text in lines
    )


async def test_filters_by_session_speaker_and_time(connect_semantic: Connect) -> None:
    async with connect_semantic() as client:
        s2 = await call(client, TOOL, query="caravan bridge river", session_id="s2")
        grimjaw = await call(client, TOOL, query="caravan sword ferry", speaker="grimjaw", top_k=10)
        later = await call(client, TOOL, query="caravan bridge", after="2026-03-05")
        nobody = await call(client, TOOL, query="caravan", speaker="Smaug")
    assert {h["session_id"] for h in s2["results"]} == {"s2"}
    assert all("Grimjaw" in h["text"] for h in grimjaw["results"]) and grimjaw["results"]
    assert {h["session_id"] for h in later["results"]} == {"s2"}
    assert nobody["results"] == [] and "Smaug" in nobody["note"]


async def test_a_date_in_the_query_favours_what_was_said_that_day(
    connect_semantic: Connect,
) -> None:
    async with connect_semantic() as client:
        later = await call(client, TOOL, query="What did Grimjaw say on 8 March 2026?")
        earlier = await call(client, TOOL, query="What did Grimjaw say on March 1, 2026?")
    assert later["results"][0]["session_id"] == "s2"
    assert "date" in later["results"][0]["matched_by"]
    assert earlier["results"][0]["session_id"] == "s1"
    assert "date" in earlier["results"][0]["matched_by"]


async def test_an_npc_never_hears_what_it_may_not_know(connect_semantic: Connect) -> None:
    async with connect_semantic(npc_id="mira") as client:
        result = await call(client, TOOL, query="Where does the cult meet?", top_k=10)
    text = " ".join(h["text"] for h in result["results"])
    assert "Cult" not in text and "cult" not in text
    assert "redacted_sentences" not in json.dumps(result)  # no count of what was left out
    async with connect_semantic(npc_id="vask") as client:
        vask = await call(client, TOOL, query="Where does the cult meet?", top_k=3)
    assert "Cult meets under the Red Kettle" in vask["results"][0]["text"]


async def test_deep_expands_through_the_graph(connect_semantic: Connect) -> None:
    async with connect_semantic(tier=Tier.DEEP) as client:
        result = await call(client, TOOL, query="What do we know about Vask?", top_k=5)
    assert any("graph" in h["matched_by"] for h in result["results"])
    async with connect_semantic(tier=Tier.STANDARD) as client:
        standard = await call(client, TOOL, query="What do we know about Vask?", top_k=5)
    assert all("graph" not in h["matched_by"] for h in standard["results"])


async def test_deep_expansion_keeps_the_calls_filters(connect_semantic: Connect) -> None:
    """The passages found through the graph are of the speaker asked for, as the others."""
    async with connect_semantic(tier=Tier.DEEP) as client:
        unfiltered = await call(client, TOOL, query="What do we know about Vask?", top_k=5)
        grimjaw = await call(
            client, TOOL, query="What do we know about Vask?", top_k=5, speaker="Grimjaw"
        )
    assert any(
        "graph" in h["matched_by"] and "Grimjaw:" not in h["text"] for h in unfiltered["results"]
    )
    assert grimjaw["results"] and all("Grimjaw:" in h["text"] for h in grimjaw["results"])


async def test_top_k_is_clamped_and_a_blank_query_returns_a_note(connect_semantic: Connect) -> None:
    async with connect_semantic() as client:
        many = await call(client, TOOL, query="caravan", top_k=900)
        blank = await call(client, TOOL, query="   ")
    assert many["top_k"] == {"requested": 900, "used": 20, "clamped": True}
    assert blank["results"] == [] and "blank" in blank["note"]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"query": "x", "session_id": "s9"}, "s1, s2"),
        ({"query": "x", "after": "last week"}, "after"),
        ({"query": "x", "before": "day 4"}, "not by story day"),
        ({"query": "x" * 5000}, "query"),
        ({"query": "caravan\x00"}, "NUL"),
        ({"query": "x", "top_k": "ten"}, "top_k"),
    ],
)
async def test_bad_input_names_the_problem(
    connect_semantic: Connect, arguments: dict[str, object], named: str
) -> None:
    async with connect_semantic() as client:
        assert named in await call_error(client, TOOL, **arguments)
