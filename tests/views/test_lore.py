"""The lore library through the read service: passages ranked beside the facts of
search_facts and pinned into hot contexts, each only for a viewer who may read it, even after
the table has said the secret aloud. Over the spoken village (Mira does not know the Cult;
Vask does) with two documents: a public harbour guide, and a pact known to Vask alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import PurePath

import pytest

from glyphoxa_mcp.domain.models import NewEntry, NewSession, Visibility
from glyphoxa_mcp.lore.documents import parse_document
from glyphoxa_mcp.pipeline.lore_embedding import add_lore
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.recall.hot_budgets import HotBudgets
from glyphoxa_mcp.storage.lore_library import LoreLibrary
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.results import FactHit
from glyphoxa_mcp.views.view import View
from tests.conftest import PostgresForTests, read_only, seed_spoken_village, seeded_database

TEN = clamp(10, 50)
HARBOUR = """# The Harbour
## Tides
The tide tables of Saltmere are kept by the harbour master. At the spring tide the
lighthouse steps flood.

## The Lighthouse
The old lighthouse has been dark for twenty years. The Cult meets in its cellar on
moonless nights.
"""
PACT = """# The Drowned Pact
Captain Vask swore the drowned pact with the sea witch Morwen: the harbour's ships for her
black pearls.
"""
# What the table said at the next session, with the pact in it.
TABLE_TALK = [
    ("Mira", "I heard Vask swore a drowned pact with the sea witch Morwen for black pearls."),
    ("Tomas", "A pact with Morwen? The harbour's ships for pearls, then."),
]
SECRET_WORDS = ("Morwen", "pearls", "pact")


async def seed(memory: CampaignMemory, embedder: LocalMiniLMEmbedder) -> None:
    await seed_spoken_village(memory, embedder)
    db = memory.db
    harbour = parse_document(HARBOUR, "harbour.md", PurePath("harbour.md"))
    pact = parse_document(PACT, "pact.md", PurePath("pact.md"))
    await add_lore(db, memory.campaign_id, [harbour], Visibility(), embedder)
    await add_lore(
        db, memory.campaign_id, [pact], Visibility(secret=True, known_by=("vask",)), embedder
    )
    library = LoreLibrary(db, memory.campaign_id)
    await library.pin("mira", "harbour", "The Harbour > Tides")
    await library.pin("mira", "harbour", "The Harbour > The Lighthouse")
    await library.pin("vask", "pact", "The Drowned Pact")
    start = datetime(2026, 3, 15, 19, tzinfo=UTC)
    await memory.sessions.upsert(NewSession(id="s3", title="Low Tide", started_at=start))
    await memory.log.append_many(
        "s3",
        [
            NewEntry(
                speaker_id=name.lower(),
                speaker_name=name,
                text=text,
                spoken_at=start + timedelta(seconds=10 * i),
            )
            for i, (name, text) in enumerate(TABLE_TALK)
        ],
    )


@pytest.fixture(scope="module")
def lore_dsn(test_server: PostgresForTests, offline_embedder: LocalMiniLMEmbedder) -> str:
    async def seeded(memory: CampaignMemory) -> None:
        await seed(memory, offline_embedder)

    return seeded_database(test_server, test_server.template_384, 384, seeded, shared_as="lore")


@pytest.fixture
async def village(lore_dsn: str) -> AsyncIterator[CampaignMemory]:
    async with read_only(lore_dsn, 384) as memory:
        yield memory


@pytest.fixture
def dm(village: CampaignMemory, offline_embedder: LocalMiniLMEmbedder) -> View:
    return View(village, None, offline_embedder)


def lore(hits: list[FactHit]) -> list[FactHit]:
    return [hit for hit in hits if hit.kind == "lore"]


async def test_lore_passages_rank_beside_facts_with_their_document_and_heading(
    dm: View,
) -> None:
    mira = dm.of_npc("mira")
    found = await mira.search_facts("who keeps the tide tables of Saltmere", TEN)
    first = found.results[0]
    assert (first.kind, first.document, first.document_title, first.heading) == (
        "lore",
        "harbour",
        "harbour",
        "The Harbour > Tides",
    )
    assert first.matched_by == ["meaning", "words"] and first.secret is False
    assert first.provenance.source == "dm" and not first.provenance.unconfirmed
    mixed = await mira.search_facts("was the bridge rebuilt after the flood tide", TEN)
    facts = [hit for hit in mixed.results if hit.kind == "fact"]
    assert facts and lore(mixed.results)
    assert facts[0].text.startswith("The bridge was rebuilt")
    assert (facts[0].document, facts[0].heading) == (None, None)


async def test_secret_lore_reaches_its_knowers_alone_even_after_the_table_said_it(
    dm: View,
) -> None:
    query = "the drowned pact Vask swore with the sea witch Morwen for black pearls"
    for viewer, shown in ((dm, True), (dm.of_npc("vask"), True), (dm.of_npc("mira"), False)):
        found = await viewer.search_facts(query, TEN)
        pact = [hit for hit in lore(found.results) if hit.document == "pact"]
        assert bool(pact) is shown, viewer.label
        if shown:
            assert pact[0].secret is True and pact[0].heading == "The Drowned Pact"
        else:
            everything = found.model_dump_json()
            assert not any(word in everything for word in SECRET_WORDS)
    # The lines said at the table stay in the transcript; they make nothing of the lore public.
    heard = await dm.of_npc("mira").search_sessions("Morwen pearls", TEN)
    assert all("Morwen" not in hit.text or hit.session_id == "s3" for hit in heard.results)


async def test_a_passage_naming_a_hidden_entity_is_withheld_whole_from_search(
    dm: View,
) -> None:
    query = "the dark lighthouse cellar on moonless nights"
    headings = {
        viewer: [
            hit.heading for hit in lore((await dm.of_npc(viewer).search_facts(query, TEN)).results)
        ]
        for viewer in ("mira", "vask")
    }
    assert "The Harbour > The Lighthouse" in headings["vask"]
    assert "The Harbour > The Lighthouse" not in headings["mira"]


async def test_a_search_narrowed_to_a_subject_session_or_time_has_no_lore(dm: View) -> None:
    for narrowed in (
        {"entity": "Grimjaw"},
        {"session_id": "s1"},
        {"after": "day 1"},
        {"before": "2027-01-01"},
    ):
        found = await dm.search_facts("tide tables of Saltmere", TEN, **narrowed)
        assert not lore(found.results), narrowed


async def test_pinned_lore_is_in_the_hot_context_as_its_npc_may_read_it(dm: View) -> None:
    mira = await dm.of_npc("mira").hot_context("mira")
    assert "[harbour > The Harbour > Tides] The tide tables of Saltmere" in mira.lore.text
    assert "The old lighthouse has been dark for twenty years." in mira.lore.text
    assert "## What you know of the world\n[harbour > The Harbour > Tides]" in mira.prompt
    # The table's talk of the pact is in her transcript; her lore holds none of it.
    told = mira.prompt.split("## What you know of the world")[1].split("## Where you are")[0]
    assert told.strip() == mira.lore.text
    assert not any(word in told for word in ("Cult", *SECRET_WORDS))
    vask = await dm.of_npc("vask").hot_context("vask")
    assert "sea witch Morwen" in vask.lore.text
    assert "The Cult meets in its cellar" not in vask.lore.text  # not pinned to him
    tight = await dm.of_npc("mira").hot_context("mira", budgets=HotBudgets(lore_tokens=50))
    # The first pinned fits, the one pinned after it does not.
    assert tight.lore.dropped_lines == 1 and tight.lore.tokens <= 50
    assert tight.lore.text.startswith("[harbour > The Harbour > Tides]")
    grimjaw = await dm.of_npc("grimjaw").hot_context("grimjaw")
    assert (grimjaw.lore.text, "## What you know of the world" in grimjaw.prompt) == ("", False)
