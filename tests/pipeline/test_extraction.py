"""What the LLM learns from a session is stored window by window (pipeline/extraction.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewEntry, NewSession
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.errors import ProviderError
from glyphoxa_mcp.pipeline.extraction import LINES_PER_REQUEST, extract_session
from glyphoxa_mcp.providers.chat import ChatModel, ChatSettings
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.providers.fake_openai import chat, garbage, serve

START = datetime(2026, 3, 7, 19, tzinfo=UTC)
LEARNED = "Wagon ruts lead to the old salt caves."


async def test_a_window_s_learning_is_kept_to_its_witnesses_before_the_next_is_asked_for(
    db: Database,
) -> None:
    """Ysolde alone is at the crossing; the model answers the first window, then fails."""
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db, file, "demo")  # a new campaign: witnessed
    memory = CampaignMemory(db, "demo")
    await memory.sessions.upsert(NewSession(id="s1", started_at=START))
    await memory.scenes.record([Scene(session_id="s1", started_at=START, present=("ysolde",))])
    await memory.log.append_many(
        "s1",
        [
            NewEntry(
                speaker_id="ysolde",
                speaker_name="Captain Ysolde",
                npc_id="ysolde",
                text=f"My guards found wagon ruts, line {number}.",
                spoken_at=START + timedelta(seconds=number),
            )
            for number in range(LINES_PER_REQUEST + 10)
        ],
    )
    said = {
        "entities": [],
        "relationships": [],
        "facts": [
            {"subject": None, "text": LEARNED, "confidence": 0.9, "basis": "stated", "line": 1}
        ],
    }
    with serve(chat(json.dumps(said)), garbage) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="m", api_key="k"))
        with pytest.raises(ProviderError):
            await extract_session(memory, model, "s1", await memory.log.unextracted("s1"), 0.7)
    [fact] = [f for f in await memory.graph.current_facts() if f.text == LEARNED]
    # Known to who was there and to whom word of it went, not to every NPC.
    assert "ysolde" in fact.visibility.known_by and "maelis" not in fact.visibility.known_by
