"""Reads that keep working when part of the machinery does not: a search ranks by words alone
when the embedding model fails or is too slow, and an NPC's last hot context is kept for an
outage. (The outage itself, with a real database frozen and restarted, is in
tests/server/test_outages.py.)"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from glyphoxa_mcp.providers.openai_embeddings import OpenAIEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.results import WORDS_ONLY_NOTE
from glyphoxa_mcp.views.view import View
from tests.conftest import read_only
from tests.providers.fake_openai import Reply, embeddings, serve, unauthorised

FIVE = clamp(5, 50)
DIMENSION = 384


@pytest.fixture
async def village(spoken_village_dsn: str) -> AsyncIterator[CampaignMemory]:
    async with read_only(spoken_village_dsn, DIMENSION) as memory:
        yield memory


def remote(base_url: str) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        model="text-embedding-test", dimension=DIMENSION, api_key="k", base_url=base_url
    )


def slow(body: dict[str, Any]) -> Reply:
    time.sleep(0.9)
    return embeddings(DIMENSION)(body)


async def test_sessions_are_searched_by_words_alone_when_the_embedder_fails(
    village: CampaignMemory,
) -> None:
    with serve(unauthorised) as fake:
        view = View(village, None, remote(fake.base_url))
        found = await view.search_sessions("forge", FIVE)
    assert found.note == WORDS_ONLY_NOTE
    assert found.results and all("meaning" not in hit.matched_by for hit in found.results)
    assert any("forge" in hit.text.lower() for hit in found.results)


@pytest.mark.slow
async def test_a_slow_embedder_leaves_the_search_time_to_answer_by_words(
    village: CampaignMemory,
) -> None:
    with serve(slow) as fake:
        view = View(village, None, remote(fake.base_url))
        started = time.monotonic()
        # Half of the 1 s left goes to the embedding: it is given up at 0.5 s.
        with anyio.fail_after(1.0):
            found = await view.search_sessions("forge", FIVE)
        took = time.monotonic() - started
    assert found.note == WORDS_ONLY_NOTE and found.results
    assert took < 1.0


async def test_facts_are_searched_by_words_alone_when_the_embedder_fails(
    village: CampaignMemory,
) -> None:
    with serve(unauthorised) as fake:
        found = await View(village, None, remote(fake.base_url)).search_facts("forge", FIVE)
    assert found.note == WORDS_ONLY_NOTE


async def test_the_last_hot_context_is_kept_marked_degraded_with_its_age(
    village: CampaignMemory,
) -> None:
    view = View(village, None)
    assert view.last_hot_context("grimjaw") is None
    built = await view.hot_context("grimjaw")
    kept = view.last_hot_context("grimjaw")
    assert kept is not None and built.degraded is False
    assert kept.degraded is True and kept.age_s is not None and kept.age_s >= 0
    assert kept.prompt == built.prompt and kept.identity == built.identity
    assert view.last_hot_context("grimjaw", "another-session") is None
