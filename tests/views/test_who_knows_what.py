"""Who knows what through an NPC's tools, on the sample campaign (witnessed): session 2 at
Greywater Crossing had only Captain Ysolde present; Brannoch knows her (word reaches him),
Old Berrit does not (two ties away), and the sample's DM wrote each scene's summary and gist.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from glyphoxa_mcp.demo import prepare
from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.models import NewFact, Provenance, Visibility
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View
from tests.conftest import DatabaseFactory, PostgresForTests, seeded_database
from tests.storage.saga_fixtures import clone_of

CROSSING = "session-2"
RUTS = "wagon ruts salt caves smugglers"


@pytest.fixture(scope="session")
def prepared_sample(test_server: PostgresForTests, offline_embedder: LocalMiniLMEmbedder) -> str:
    """The sample campaign prepared (loaded, its sessions ingested and embedded) once."""

    async def seed(memory: CampaignMemory) -> None:
        await prepare(memory.db, offline_embedder, lambda _: None)

    return seeded_database(
        test_server, test_server.template_384, 384, seed, shared_as="prepared sample"
    )


@pytest.fixture
async def sample(databases: DatabaseFactory, prepared_sample: str) -> AsyncIterator[CampaignMemory]:
    """The prepared sample, cloned for the test (some change what it knows)."""
    async with clone_of(databases, prepared_sample, 384) as db:
        yield CampaignMemory(db, "demo")


def view(memory: CampaignMemory, npc: str | None, embedder: LocalMiniLMEmbedder) -> View:
    return View(memory, npc, embedder)


async def crossing_lines(
    memory: CampaignMemory, npc: str | None, embedder: LocalMiniLMEmbedder
) -> list[str]:
    found = await view(memory, npc, embedder).search_sessions(RUTS, clamp(20, 20))
    return [hit.text for hit in found.results if hit.session_id == CROSSING]


@pytest.mark.slow
async def test_only_those_at_the_crossing_read_its_lines_and_summary(
    sample: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    assert await crossing_lines(sample, "ysolde", offline_embedder)
    assert await crossing_lines(sample, None, offline_embedder)
    for npc in ("brannoch", "berrit", "maelis"):
        assert await crossing_lines(sample, npc, offline_embedder) == [], npc

    ysolde = await view(sample, "ysolde", offline_embedder).session_summary(CROSSING)
    assert ysolde.summary is not None and "wagon ruts" in ysolde.summary
    assert ysolde.scenes is None  # she was at all of it

    brannoch = await view(sample, "brannoch", offline_embedder).session_summary(CROSSING)
    assert brannoch.summary is not None
    assert brannoch.summary.startswith("Captain Ysolde told you (you were not there):")
    assert "wagon ruts" not in brannoch.summary  # the gist, not what was said
    [scene] = brannoch.scenes or []
    assert (scene.known, scene.heard_from, scene.location) == (
        "heard of",
        "Captain Ysolde",
        "Greywater Crossing",
    )

    berrit = await view(sample, "berrit", offline_embedder).session_summary(CROSSING)
    assert (berrit.summary, berrit.scenes) == (None, [])
    assert berrit.note is not None and "Nothing of this session reached you" in berrit.note
    # Berrit was at the Red Kettle: that session's summary is his whole.
    inn = await view(sample, "berrit", offline_embedder).session_summary("session-1")
    assert inn.summary is not None and inn.scenes is None


async def test_a_line_the_dm_kept_from_an_npc_keeps_its_scenes_summary_from_it(
    sample: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    """Ysolde was at the whole crossing; the DM says she did not hear Lyra's question."""
    lines = await sample.log.entries(CROSSING)
    [question] = [line.id for line in lines if line.text.startswith("Salt caves?")]
    await sample.log.set_hearers([question], [])
    ysolde = await view(sample, "ysolde", offline_embedder).session_summary(CROSSING)
    # The summary was written from every line: none of it is hers now, as a scene.
    assert ysolde.summary is None
    assert ysolde.scenes is not None and [s.known for s in ysolde.scenes] == ["witnessed"]
    assert ysolde.note is not None and ysolde.note.startswith("Not everything said")
    # Nor is its gist Brannoch's, who heard of the crossing from her.
    brannoch = await view(sample, "brannoch", offline_embedder).session_summary(CROSSING)
    assert brannoch.summary is None
    await sample.log.set_hearers([question], None)
    ysolde = await view(sample, "ysolde", offline_embedder).session_summary(CROSSING)
    assert ysolde.summary is not None and "wagon ruts" in ysolde.summary
    brannoch = await view(sample, "brannoch", offline_embedder).session_summary(CROSSING)
    assert brannoch.summary is not None and "told you" in brannoch.summary


async def test_the_hot_context_holds_only_what_was_heard(
    sample: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    ysolde = await view(sample, None, offline_embedder).hot_context("ysolde", CROSSING)
    brannoch = await view(sample, None, offline_embedder).hot_context("brannoch", CROSSING)
    assert "wagon ruts" in ysolde.prompt
    assert "wagon ruts" not in brannoch.prompt and "(nothing yet)" in brannoch.prompt


@pytest.mark.slow
async def test_what_the_crossing_taught_is_a_rumour_to_those_word_reached(
    sample: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    [line] = [e for e in await sample.log.entries(CROSSING) if "wagon ruts" in e.text]
    await sample.graph.upsert_fact(
        NewFact(
            subject_id="ysolde",
            text="Ysolde's guards found wagon ruts leading to the old salt caves.",
            session_id=CROSSING,
            provenance=Provenance(
                session_id=CROSSING, confidence=0.95, source="stated", entry_id=line.id
            ),
        )
    )
    assert await sample.curation.teach_witnessed(CROSSING) == 1

    async def found(npc: str) -> list[tuple[str | None, bool]]:
        hits = await view(sample, npc, offline_embedder).search_facts(RUTS, clamp(10, 10))
        return [
            (h.provenance.heard_from, h.provenance.unconfirmed)
            for h in hits.results
            if "wagon ruts" in h.text
        ]

    assert await found("ysolde") == [(None, False)]  # she was there: confident, first-hand
    assert await found("brannoch") == [("Captain Ysolde", True)]
    assert await found("berrit") == []

    # The DM narrows it to Ysolde: word does not bring it back.
    [fact] = [f for f in await sample.graph.current_facts() if "wagon ruts" in f.text]
    await sample.curation.set_visibility("fact", fact.id, Visibility(known_by=("ysolde",)))
    await sample.curation.teach_witnessed(CROSSING)
    assert await found("brannoch") == []


async def test_a_shared_campaign_reads_as_before_witnessing(
    sample: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await Campaigns(sample.db).configure_knowledge(sample.campaign_id, knowledge=Knowledge.SHARED)
    for npc in ("brannoch", "berrit"):
        assert await crossing_lines(sample, npc, offline_embedder), npc
        summary = await view(sample, npc, offline_embedder).session_summary(CROSSING)
        assert summary.summary is not None and "wagon ruts" in summary.summary
        assert summary.scenes is None


async def test_the_hot_context_is_where_the_scene_is_with_who_is_there(
    sample: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    """Ysolde lives in Saltmere; the Crossing's scene has her there, with the players only.
    At the Red Kettle, Brannoch's scene has Old Berrit and Ilvenna with him."""
    ysolde = await view(sample, None, offline_embedder).hot_context("ysolde", CROSSING)
    assert ysolde.location is not None and ysolde.location.name == "Greywater Crossing"
    assert ysolde.present == []
    brannoch = await view(sample, None, offline_embedder).hot_context("brannoch", "session-1")
    assert {e.name for e in brannoch.present} == {"Old Berrit", "Ilvenna"}
    assert "Location: Red Kettle" in brannoch.prompt
    # Not in the scene being played: where it lives, as before scenes.
    berrit = await view(sample, None, offline_embedder).hot_context("berrit", CROSSING)
    assert berrit.location is not None and berrit.location.name == "Red Kettle"
