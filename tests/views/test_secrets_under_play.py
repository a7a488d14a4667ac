"""Each rule that keeps a secret once the table has talked about it, in the read service,
over the red-team campaign (tests/server/red_team_world.py): Ysolde may not know the Salt
Knives; the DM reads everything."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.views.limits import Clamped
from glyphoxa_mcp.views.view import View
from tests.conftest import read_only
from tests.server.red_team_world import CAMPAIGN


@contextlib.asynccontextmanager
async def viewing(dsn: str, embedder: LocalMiniLMEmbedder, npc: str | None) -> AsyncIterator[View]:
    async with read_only(dsn, 384, CAMPAIGN) as memory:
        yield await View.open(memory, npc, embedder)


def limit(value: int) -> Clamped:
    return Clamped(requested=value, used=value)


@pytest.mark.slow
async def test_an_episode_whose_title_names_a_secret_is_shown_by_its_date(
    red_team_dsn: str, offline_embedder: LocalMiniLMEmbedder
) -> None:
    async with viewing(red_team_dsn, offline_embedder, "ysolde") as ysolde:
        events = await ysolde.query_entities(limit(50), limit(1), entity_type=EntityType.EVENT)
        kettle = await ysolde.query_entities(limit(5), limit(1), name="Brannoch")
    names = {e.name for e in events.entities}
    assert "the session of 2026-03-21" in names
    assert not any("Knives" in name for name in names)
    sentences = [r.sentence for e in kettle.entities for r in e.relationships]
    assert "Brannoch took part in the session of 2026-03-21." in sentences
    async with viewing(red_team_dsn, offline_embedder, None) as dm:
        events = await dm.query_entities(limit(50), limit(1), entity_type=EntityType.EVENT)
    assert "Session: The Salt Knives' Cellar" in {e.name for e in events.entities}


async def test_a_passage_holding_a_hidden_line_neither_ranks_nor_shows_its_ids(
    red_team_dsn: str, offline_embedder: LocalMiniLMEmbedder
) -> None:
    async with viewing(red_team_dsn, offline_embedder, "ysolde") as ysolde:
        lines = await ysolde.memory.log.entries("session-3")
        hidden = {
            e.id
            for e in lines
            if e.dm_only or (await ysolde.scope()).redactor.mentions_hidden(e.text)
        }
        found = await ysolde.search_sessions("Salt Knives in the cellar", limit(10))
    assert len(hidden) >= 6
    assert found.results, "what Ysolde may hear is still found"
    assert not {i for hit in found.results for i in hit.entry_ids} & hidden
    # Lines of that session she may hear are found one by one, not as the passage.
    stew = await _search(red_team_dsn, offline_embedder, "ysolde", "stew upstairs tar pepper")
    assert any("stew upstairs" in hit.text for hit in stew)
    assert all(len(hit.entry_ids) == 1 for hit in stew if hit.session_id == "session-3")


async def _search(dsn: str, embedder: LocalMiniLMEmbedder, npc: str, query: str) -> list:
    async with viewing(dsn, embedder, npc) as view:
        return (await view.search_sessions(query, limit(10))).results


async def test_hints_list_only_the_sessions_the_viewer_may_read(
    red_team_dsn: str, offline_embedder: LocalMiniLMEmbedder
) -> None:
    async with viewing(red_team_dsn, offline_embedder, "ysolde") as ysolde:
        with pytest.raises(NotFoundError) as unknown:
            await ysolde.session_summary("no-such-session")
        with pytest.raises(NotFoundError) as dm_only:
            await ysolde.session_summary("session-5")
    assert "session-4" in str(unknown.value) and "session-5" not in str(unknown.value)
    # A DM-only session answers exactly like one that does not exist.
    assert str(dm_only.value).replace("'session-5'", "'no-such-session'") == str(unknown.value)
    async with viewing(red_team_dsn, offline_embedder, None) as dm:
        with pytest.raises(NotFoundError) as listed:
            await dm.session_summary("no-such-session")
        prep = await dm.session_summary("session-5")
    assert "session-5" in str(listed.value) and prep.title == "Session zero notes"


@pytest.mark.slow
async def test_dm_only_lines_reach_the_dm_and_no_npc(
    red_team_dsn: str, offline_embedder: LocalMiniLMEmbedder
) -> None:
    query = "Tarquel paid the smugglers for the insurance"
    for npc in ("ysolde", "tarquel", "berrit", "dovrek"):
        assert not any(
            "insurance" in hit.text
            for hit in await _search(red_team_dsn, offline_embedder, npc, query)
        )
    assert any(
        "insurance" in hit.text
        for hit in await _search(red_team_dsn, offline_embedder, None, query)
    )
    async with viewing(red_team_dsn, offline_embedder, "ysolde") as ysolde:
        summary = await ysolde.session_summary("session-3")
    assert summary.title is None and "insurance" not in (summary.summary or "")
