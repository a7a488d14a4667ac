from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import ConfigurationError
from glyphoxa_mcp.evaluation.locomo import parse_locomo
from glyphoxa_mcp.evaluation.locomo_run import evaluate
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.evaluation.test_locomo import TINY


@pytest.mark.slow
async def test_each_question_is_asked_through_the_search_tool_and_scored(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    conversations = parse_locomo(TINY.read_text(), "tiny.json")
    report = await evaluate(db384, conversations, offline_embedder, "tiny.json")

    assert (report.turns, report.questions, report.unscored) == (11, 5, 1)
    assert (report.tier, report.top_k) == ("STANDARD", 20)
    ranks = {o.question: o.ranks for o in report.outcomes}
    assert ranks["Which ribbon did Pepper win at the county dog show?"] == [1]
    rows = {row.label: row for row in report.rows}
    assert list(rows) == [
        "1 multi-hop",
        "2 temporal",
        "4 single-hop",
        "5 adversarial",
        "overall (1-4)",
        "all (1-5)",
    ]
    assert rows["overall (1-4)"].questions == 4 and rows["all (1-5)"].questions == 5
    # Eleven turns in all: the first twenty returned hold every evidence turn.
    assert all(row.recall[20] == 100.0 for row in report.rows)
    for row in report.rows:
        members = [o for o in report.outcomes if o.category in row.categories]
        expected = sum(
            sum(r is not None and r <= 5 for r in o.ranks) / len(o.ranks) for o in members
        ) / len(members)
        assert row.recall[5] == round(100 * expected, 1)

    memory = CampaignMemory(db384, "locomo-tiny-1")
    [first, second, _] = await memory.sessions.list()
    assert (first.id, first.title) == ("session-1", "2:00 pm on 3 March, 2024")
    assert first.started_at == datetime(2024, 3, 3, 14, 0, tzinfo=UTC)
    entries = await memory.log.entries(second.id)
    assert [e.speaker_id for e in entries] == ["bram", "ada", "bram", "ada"]
    assert all(e.spoken_at.day == 10 for e in entries)


@pytest.mark.slow
async def test_a_campaign_that_exists_is_never_written_into(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    conversations = parse_locomo(TINY.read_text(), "tiny.json")
    await evaluate(db384, conversations, offline_embedder, "tiny.json")
    with pytest.raises(ConfigurationError, match="'locomo-tiny-1' already exists"):
        await evaluate(db384, conversations, offline_embedder, "tiny.json")
