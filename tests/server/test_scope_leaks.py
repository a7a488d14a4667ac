"""Regression tests: nothing about a hidden NPC reaches another NPC through free text.

Vex is a secret NPC nobody knows. Grimjaw (the NPC in scope) must never see Vex's name, words
or traces: in transcripts, facts, attributes, story labels, filters or subscriptions.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from glyphoxa_mcp.domain.models import NewEntity, NewEntry, NewFact, NewRelationship, Visibility
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import unhurried
from tests.server.conftest import call
from tests.storage.graph_fixtures import build_village

START = datetime(2026, 3, 20, 19, tzinfo=UTC)


@pytest.fixture(autouse=True)
async def world(semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder) -> None:
    memory, graph = semantic_memory, semantic_memory.graph
    await build_village(memory)
    await graph.upsert_entity(
        NewEntity(type=EntityType.NPC, name="Vex", visibility=Visibility(secret=True))
    )
    await graph.upsert_entity(
        NewEntity(
            type=EntityType.NPC,
            name="Mira",
            attributes={"secretly_serves": "Vex", "class": "ranger"},
        )
    )
    await graph.upsert_entity(
        NewEntity(
            type=EntityType.LOCATION,
            name="Red Kettle",
            attributes={"description": "Smoky. Vex hides in the cellar."},
        )
    )
    await graph.upsert_entity(
        NewEntity(
            type=EntityType.QUEST,
            name="The Ledger",
            attributes={"status": "active", "objective": "Bring the ledger to Vex"},
        )
    )
    await graph.upsert_relationship(
        NewRelationship(source_id="grimjaw", target_id="the-ledger", rel_type="QUEST_GIVER")
    )
    await graph.upsert_fact(NewFact(subject_id="grimjaw", text="Grimjaw owes Vex a fortune."))
    await graph.upsert_fact(
        NewFact(
            subject_id="grimjaw", text="Grimjaw lost his hammer.", story_label="the night Vex came"
        )
    )
    lines = [
        ("mira", "Mira", None, "Anyone seen the crown?"),
        ("vex", "Vex", "vex", "The crown is under the altar. Tell no one."),
        ("grimjaw", "Grimjaw", "grimjaw", "I saw nothing at the altar."),
    ]
    await memory.log.append_many(
        "s1",
        [
            NewEntry(
                speaker_id=s,
                speaker_name=n,
                npc_id=npc,
                text=t,
                spoken_at=START + timedelta(seconds=i),
            )
            for i, (s, n, npc, t) in enumerate(lines)
        ],
    )
    await process_session(memory, offline_embedder, "s1")


@contextlib.asynccontextmanager
async def as_grimjaw(
    memory: CampaignMemory, embedder: LocalMiniLMEmbedder
) -> AsyncIterator[Client]:
    state = ServerState(View(memory, "grimjaw", embedder), unhurried(Tier.DEEP))
    async with Client(build_server(state), mode="legacy") as client:
        yield client


def no_trace(payload: object) -> None:
    text = json.dumps(payload)
    assert "Vex" not in text and "vex" not in text and "Tell no one" not in text, text


async def test_hot_context_has_no_trace_of_a_hidden_npc(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    async with as_grimjaw(semantic_memory, offline_embedder) as client:
        hot = json.loads(
            (await client.read_resource("glyphoxa://npc/grimjaw/hot")).contents[0].text
        )
    no_trace(hot)
    said = [line["text"] for line in hot["transcript"]]
    assert said == ["Anyone seen the crown?", "I saw nothing at the altar."]
    assert "Grimjaw lost his hammer." in hot["identity"]["text"]  # the fact itself is fine
    assert (
        "Active quest: The Ledger" in hot["scene"]["text"] and "Smoky." not in hot["scene"]["text"]
    )


async def test_tools_have_no_trace_of_a_hidden_npc(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    async with as_grimjaw(semantic_memory, offline_embedder) as client:
        mira = await call(client, "memory.query_entities", name="Mira")
        passages = await call(client, "memory.search_sessions", query="crown altar", top_k=10)
        by_speaker = await call(client, "memory.search_sessions", query="crown", speaker="Vex")
        by_npc = await call(client, "memory.search_sessions", query="crown", npc_id="vex")
        unknown = await call(client, "memory.search_sessions", query="crown", speaker="Nobody")
        facts = await call(client, "memory.search_facts", query="hammer fortune owes", top_k=10)
    for payload in (mira, passages, facts):
        no_trace(payload)
    assert mira["entities"][0]["attributes"] == {"class": "ranger"}
    assert by_speaker["results"] == by_npc["results"] == unknown["results"] == []
    assert by_speaker["note"] == "No speaker named 'Vex'."
    assert unknown["note"] == "No speaker named 'Nobody'."
    assert [h["text"] for h in facts["results"]] == []  # both facts about Grimjaw name Vex


async def test_an_npc_server_confirms_no_other_npc_by_subscription(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    async with as_grimjaw(semantic_memory, offline_embedder) as client:
        errors = []
        for uri in ("glyphoxa://npc/vex/hot", "glyphoxa://npc/nosuch/hot"):
            with pytest.warns(MCPDeprecationWarning), pytest.raises(MCPError) as caught:
                await client.subscribe_resource(uri)
            errors.append(str(caught.value))
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource("glyphoxa://npc/grimjaw/hot")
    assert errors[0] == errors[1] and "speaks for 'grimjaw'" in errors[0]
