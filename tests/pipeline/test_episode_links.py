"""Honest links (issue 31): an episode says who took part in its session (spoke, or was
present in a scene), where it happened (its scenes' places), and what was only mentioned;
a link is never known more widely than what it links, and a mention is no part of an NPC's
identity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.episodes import episode_id
from glyphoxa_mcp.domain.models import NewEntry, NewSession
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.pipeline.finish import end_session
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View

# A session ended on the sample campaign: a whole workflow.
pytestmark = pytest.mark.slow

START = datetime(2026, 4, 18, 19, tzinfo=UTC)
KAEL = "Brannoch, they say the Salt Knives took the caravan to Greywater Crossing."
BRANNOCH = "Hush. Ask Captain Ysolde, not me, and mind the Lantern of Osk."
LINES = [("p-kael", "Kael", None, KAEL), ("brannoch", "Brannoch", "brannoch", BRANNOCH)]


async def test_an_episode_links_who_took_part_where_and_what_was_only_mentioned(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db384, file, "demo")
    memory = CampaignMemory(db384, "demo")
    await memory.sessions.upsert(NewSession(id="s9", title="Whispers", started_at=START))
    # Ilvenna serves in the room and says nothing: she was there all the same.
    await memory.scenes.record(
        [Scene(session_id="s9", started_at=START, location_id="red-kettle", present=("ilvenna",))]
    )
    await memory.log.append_many(
        "s9",
        [
            NewEntry(
                speaker_id=who,
                speaker_name=name,
                npc_id=npc,
                text=text,
                spoken_at=START + timedelta(seconds=10 * i),
            )
            for i, (who, name, npc, text) in enumerate(LINES)
        ],
    )
    report = await end_session(db384, "demo", "s9", offline_embedder)
    assert set(report.participants) == {"kael", "brannoch", "ilvenna"}
    assert set(report.mentioned) == {
        "salt-knives",
        "greywater-crossing",
        "ysolde",
        "lantern-of-osk",
    }

    links = {
        (r.source_id, r.rel_type, r.target_id): r
        for r in await memory.graph.relationships_of(episode_id("s9"))
    }
    episode = episode_id("s9")
    assert (episode, "LOCATED_AT", "red-kettle") in links  # where its scene was
    assert ("ysolde", "MENTIONED_IN", episode) in links  # named, not there
    assert ("ysolde", "PARTICIPATED_IN", episode) not in links
    assert ("ilvenna", "PARTICIPATED_IN", episode) in links
    # The Salt Knives are a secret of Old Berrit's and Dovrek's: so is their mention.
    secret = links[("salt-knives", "MENTIONED_IN", episode)].visibility
    assert secret.secret and set(secret.known_by) <= {"berrit", "dovrek"}

    # A mention is no part of who Ysolde is; her endpoint's query still shows it as such.
    hot = await View(memory, None, offline_embedder).hot_context("ysolde")
    assert "mentioned in" not in hot.prompt
    [listed] = await memory.queries.snapshots(["ysolde"])
    assert any(r.relationship.rel_type == "MENTIONED_IN" for r in listed.relationships)
