"""The rankings that reorder what session search found: lines a named speaker spoke, and for
a question that asks when, lines that tell when."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_mcp.domain.models import NewEntry, NewSession
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.recall.search_tuning import SHIPPED_TUNING, SessionSearchTuning
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View

# One line a session, so each is its own passage and the ranking of lines is the result's.
SESSIONS = [
    ("tom", "Tom", "What does Mara do to relax? Mara never seems to relax."),
    ("mara", "Mara", "I paint by the river when I need to unwind; it helps me relax."),
    ("mara", "Mara", "I love camping, camping in the hills with a fire is the best camping."),
    ("mara", "Mara", "We went camping by the lake last weekend."),
]


@pytest.fixture
async def talk(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> CampaignMemory:
    start = datetime(2026, 5, 1, 19, 0, tzinfo=UTC)
    for number, (speaker_id, name, text) in enumerate(SESSIONS, 1):
        session_id = f"s{number}"
        await semantic_memory.sessions.upsert(NewSession(id=session_id, title=f"Night {number}"))
        await semantic_memory.log.append_many(
            session_id,
            [
                NewEntry(
                    speaker_id=speaker_id,
                    speaker_name=name,
                    text=text,
                    spoken_at=start + timedelta(days=7 * number),
                )
            ],
        )
        await process_session(semantic_memory, offline_embedder, session_id)
    return semantic_memory


async def first_line(
    memory: CampaignMemory, embedder: LocalMiniLMEmbedder, query: str, tuning: SessionSearchTuning
) -> str:
    view = View(memory, None, embedder, search_tuning=tuning)
    result = await view.search_sessions(query, clamp(5, 20))
    return result.results[0].text


async def test_a_question_about_a_speaker_ranks_what_they_said_first(
    talk: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    query = "What does Mara do to relax?"
    without = SHIPPED_TUNING.model_copy(update={"speaker_weight": 0.0})
    # Tom's line repeats the question; Mara's answers it.
    assert (await first_line(talk, offline_embedder, query, without)).startswith("Tom:")
    found = await first_line(talk, offline_embedder, query, SHIPPED_TUNING)
    assert found == "Mara: I paint by the river when I need to unwind; it helps me relax."


async def test_a_question_that_asks_when_ranks_the_line_that_tells_when_first(
    talk: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    query = "When did Mara go camping?"
    without = SHIPPED_TUNING.model_copy(update={"event_weight": 0.0})
    assert "I love camping" in await first_line(talk, offline_embedder, query, without)
    found = await first_line(talk, offline_embedder, query, SHIPPED_TUNING)
    assert found == "Mara: We went camping by the lake last weekend."


async def test_reorderings_are_not_named_as_what_found_a_hit(
    talk: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    view = View(talk, None, offline_embedder)
    result = await view.search_sessions("When did Mara go camping?", clamp(5, 20))
    assert all(
        set(hit.matched_by) <= {"meaning", "words", "date", "graph"} for hit in result.results
    )
