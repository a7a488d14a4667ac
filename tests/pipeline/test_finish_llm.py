"""Ending a session with an LLM: two-stage names, extraction into the graph, the summary.

The LLM is a local OpenAI-compatible server the test starts; the real `openai` client talks
to it.
"""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import (
    NewEntry,
    NewFact,
    NewSession,
    Provenance,
    Visibility,
)
from glyphoxa_mcp.pipeline.extraction import EntityLinker, parsed
from glyphoxa_mcp.pipeline.finish import end_session
from glyphoxa_mcp.providers.chat import ChatModel, ChatSettings
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.providers.fake_openai import chat, serve
from tests.storage.graph_fixtures import build_village

START = datetime(2026, 3, 1, 19, tzinfo=UTC)
RUMOUR = Provenance(confidence=0.4, source="inferred")
LINES = [
    ("gm", "DM", "Grimjaw hands you a sealed letter from Captain Vask."),
    ("p1", "Kael", "We swear to carry it to the ferryman, Osric, by dawn."),
    ("gm", "DM", "Osric works for the Town Watch, they say."),
]
EXTRACTED = {
    "entities": [
        {"name": "Osric", "type": "npc", "confidence": 0.9, "basis": "stated"},
        # A known one, under a partial misspelled name the model recognised.
        {"name": "Captain Vasc", "type": "npc", "confidence": 0.9, "same_as": "vask"},
        {"name": "the letter", "type": "item", "confidence": 0.4, "basis": "inferred"},
        {"name": "", "type": "npc", "confidence": 0.9},  # malformed: dropped
    ],
    "relationships": [
        {
            "subject": "Osric",
            "type": "employed by",
            "object": "Town Watch",
            "confidence": 0.6,
            "basis": "inferred",
            "line": 3,
        },
        {"subject": "Grimjaw", "type": "KNOWS", "object": "Nobody", "confidence": 0.9},
    ],
    "facts": [
        {
            "subject": "Grimjaw",
            "text": "Grimjaw gave the party a sealed letter from Vask.",
            "confidence": 0.95,
            "basis": "stated",
            "line": 1,
        },
        # A line the window does not have: the fact is kept, citing none.
        {"subject": "Osric", "text": "Osric is the ferryman.", "confidence": 0.9, "line": 4},
    ],
}
SUMMARY = {
    "where_and_who": "Grimjaw met Kael.",
    "happened": "Grimjaw gave the party a letter for the ferryman.",
    "decided": [],
    "promised": ["The party swore to deliver the letter by dawn."],
    "revealed": ["Osric works for the Town Watch."],
    "gist": "Grimjaw sent the party to the ferryman with a letter.",
}


def llm(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    if "adds to the" in system:
        return json.dumps(EXTRACTED)
    if "summarise" in system:
        return json.dumps(SUMMARY)
    line = json.loads(body["messages"][1]["content"])["line"]
    return json.dumps({"corrected": line, "corrections": []})


async def record(memory: CampaignMemory, session_id: str = "s1") -> None:
    await memory.sessions.upsert(NewSession(id=session_id))
    await memory.log.append_many(
        session_id,
        [
            NewEntry(
                speaker_id=who,
                speaker_name=name,
                text=text,
                spoken_at=START + timedelta(seconds=10 * i),
            )
            for i, (who, name, text) in enumerate(LINES)
        ],
    )


@pytest.mark.slow
async def test_an_llm_extracts_into_the_graph_with_provenance_and_writes_the_summary(
    db384: Database, semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await build_village(semantic_memory)
    await record(semantic_memory)
    with serve(chat(llm)) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="m"))
        report = await end_session(db384, "ashfall", "s1", offline_embedder, chat=model)
    assert report.summary_source == "llm"
    assert report.summary.splitlines() == [
        "Grimjaw met Kael.",
        "Grimjaw gave the party a letter for the ferryman.",
        "Promised:",
        "- The party swore to deliver the letter by dawn.",
        "Revealed:",
        "- Osric works for the Town Watch.",
    ]
    (part,) = await semantic_memory.summary_parts.parts_of("s1")
    assert (part.scene_started_at, part.text) == (None, report.summary)
    assert part.gist == "Grimjaw sent the party to the ferryman with a letter."
    extraction = report.extraction
    assert extraction is not None
    assert (extraction.entities_added, extraction.entities_held) == (("osric",), ("the-letter",))
    # Vask is only talked about: mentioned in the session, not taking part in it.
    assert "vask" in extraction.mentioned and "vask" in report.mentioned
    assert "vask" not in report.participants
    # The relationship to an unknown "Nobody" and the nameless entity are dropped.
    assert (extraction.relationships, extraction.facts, extraction.dropped) == (1, 2, 2)
    first, _, third = await semantic_memory.log.entries("s1")

    graph = semantic_memory.graph
    (employed,) = [r for r in await graph.relationships_of("osric") if r.rel_type == "EMPLOYED_BY"]
    assert employed.target_id == "town-watch"
    assert (employed.provenance.session_id, employed.provenance.source) == ("s1", "inferred")
    assert employed.provenance.confidence == 0.6
    assert employed.provenance.entry_id == third.id  # the line the model cited
    queue = await semantic_memory.curation.review_queue(0.7)
    assert employed.id in [r.id for r in queue.relationships]  # a rumour, for the DM
    (held,) = await semantic_memory.pending.list()
    assert (held.source, held.source_ref, held.entity.name) == (
        "session",
        "s1:the-letter",
        "the letter",
    )
    (fact,) = [f for f in await graph.facts_about("grimjaw") if "sealed letter" in f.text]
    assert (fact.provenance.source, fact.provenance.session_id) == ("stated", "s1")
    assert fact.provenance.entry_id == first.id
    (uncited,) = await graph.facts_about("osric")
    assert uncited.text == "Osric is the ferryman." and uncited.provenance.entry_id is None
    session = await semantic_memory.sessions.get("s1")
    assert (session.summary_source, session.summary) == ("llm", report.summary)
    asked = [json.loads(r["messages"][1]["content"]) for r in fake.requests]
    extraction_request = next(a for a in asked if "known_entities" in a)
    assert {e["id"] for e in extraction_request["known_entities"]} >= {"grimjaw", "vask"}
    assert extraction_request["transcript"].splitlines()[2] == (
        "[3] DM: Osric works for the Town Watch, they say."
    )


@pytest.mark.slow
async def test_an_unusable_reply_falls_back_to_the_offline_path(
    db384: Database, semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await build_village(semantic_memory)
    await record(semantic_memory)
    before = len(await semantic_memory.graph.find_entities(limit=1000))
    with serve(chat("Sorry, I cannot help with that.")) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url))
        report = await end_session(db384, "ashfall", "s1", offline_embedder, chat=model)
    assert report.summary_source == "extractive"
    # The offline summary, in its parts.
    assert report.summary.startswith("On 1 March 2026, Kael spoke.")
    (part,) = await semantic_memory.summary_parts.parts_of("s1")
    assert part.text == report.summary and part.gist.startswith("Kael spoke")
    assert report.extraction is not None and report.extraction.entities_added == ()
    # Only the session's episode is new: nothing was invented.
    assert len(await semantic_memory.graph.find_entities(limit=1000)) == before + 1


@pytest.mark.slow
async def test_extraction_never_overrules_what_the_dm_decided(
    db384: Database, semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    """Secrecy, who knows, confirmation and a retcon survive the model saying it all again,
    more confidently, in a later session."""
    await build_village(semantic_memory)
    graph, curation = semantic_memory.graph, semantic_memory.curation
    await record(semantic_memory, "s1")
    with serve(chat(llm)) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="m"))
        await end_session(db384, "ashfall", "s1", offline_embedder, chat=model)
    (employed,) = [r for r in await graph.relationships_of("osric") if r.rel_type == "EMPLOYED_BY"]
    await curation.set_visibility(
        "relationship", employed.id, Visibility(secret=True, known_by=("osric",))
    )
    (letter,) = [f for f in await graph.facts_about("grimjaw") if "sealed letter" in f.text]
    retconned = await curation.retcon(letter.id, "Grimjaw gave the party an unsealed letter.")
    await graph.upsert_fact(
        NewFact(subject_id="mira", text="Mira owes the Watch money.", provenance=RUMOUR)
    )
    (owes,) = await graph.facts_about("mira")
    await curation.confirm("fact", owes.id)

    again = {
        "entities": [],
        "relationships": [
            {"subject": "Osric", "type": "EMPLOYED_BY", "object": "Town Watch", "confidence": 1},
            {"subject": "Vask", "type": "MEMBER_OF", "object": "Cult", "confidence": 1},
        ],
        "facts": [
            {"subject": "Grimjaw", "text": letter.text, "confidence": 1},
            {"subject": "Mira", "text": owes.text, "confidence": 0.2, "basis": "inferred"},
        ],
    }

    def llm_again(body: dict[str, Any]) -> str:
        return json.dumps(again) if "adds to the" in body["messages"][0]["content"] else llm(body)

    await record(semantic_memory, "s2")
    with serve(chat(llm_again)) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="m"))
        report = await end_session(db384, "ashfall", "s2", offline_embedder, chat=model)
    assert report.extraction is not None and report.extraction.facts == 1

    stored = await graph.get_relationship(employed.id)
    assert (stored.visibility.secret, stored.visibility.known_by) == (True, ("osric",))
    assert stored.provenance.confidence == 1  # the stronger reading is kept, secretly
    (cult,) = [r for r in await graph.relationships_of("vask") if r.rel_type == "MEMBER_OF"]
    assert (cult.visibility.known_by, cult.provenance.source) == (("vask",), "dm")
    current = [f.text for f in await graph.facts_about("grimjaw")]
    assert retconned.text in current and letter.text not in current
    (still,) = await graph.facts_about("mira")
    assert still.provenance.dm_confirmed and still.provenance.confidence == RUMOUR.confidence
    # The episode the DM hid stays hidden when the session is ended again.
    await curation.set_visibility("entity", report.episode_id, Visibility(secret=True))
    with serve(chat(llm_again)) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="m"))
        await end_session(db384, "ashfall", "s2", offline_embedder, chat=model)
    assert (await graph.get_entity(report.episode_id)).visibility.secret


def test_names_are_linked_exactly_then_by_alias_then_by_sound_then_same_as() -> None:
    from glyphoxa_mcp.domain.models import Entity
    from glyphoxa_mcp.domain.vocabulary import EntityType

    def entity(entity_id: str, name: str, *aliases: str) -> Entity:
        return Entity(
            id=entity_id,
            type=EntityType.NPC,
            name=name,
            aliases=aliases,
            attributes={},
            visibility=Visibility(),
        )

    linker = EntityLinker(
        [entity("vask", "Captain Oriel Vask", "the Captain"), entity("mira", "Mira")]
    )
    assert linker.resolve("captain oriel vask") == "vask"
    assert linker.resolve("The Captain") == "vask"
    assert linker.resolve("Captain Oriol Vask") == "vask"
    assert linker.resolve("the harbour master", same_as="vask") == "vask"
    assert linker.resolve("the harbour master", same_as="nobody") is None
    assert linker.resolve("Osric") is None


def test_each_item_of_a_reply_is_validated_on_its_own() -> None:
    extraction = parsed(
        {
            "entities": [{"name": "Osric", "type": "npc", "confidence": 0.9}, {"name": "X"}],
            "relationships": "not a list",
            "facts": [
                {"text": "It rained.", "confidence": 2},
                {"text": "It snowed.", "confidence": 0.9, "line": "the third"},
            ],
        }
    )
    assert [e.name for e in extraction.entities] == ["Osric"]
    assert extraction.relationships == [] and extraction.dropped == 2
    # A line that is no number cites nothing; the fact stays.
    assert [(f.text, f.line) for f in extraction.facts] == [("It snowed.", None)]
    assert parsed(None).entities == []


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
async def test_an_unreachable_llm_ends_offline_and_leaves_the_session_for_a_retry(
    db384: Database, semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await build_village(semantic_memory)
    await record(semantic_memory)
    down = ChatModel(
        ChatSettings(base_url=f"http://127.0.0.1:{closed_port()}/v1", model="m", max_retries=0)
    )
    report = await end_session(db384, "ashfall", "s1", offline_embedder, chat=down)
    assert report.summary_source == "extractive"
    assert report.llm_unreachable is not None and "LLM" in report.llm_unreachable
    assert [s.id for s in await semantic_memory.sessions.waiting_for_llm()] == ["s1"]
    # Nothing was read by the model: the retry reads every line.
    assert len(await semantic_memory.log.unextracted("s1")) == len(LINES)

    with serve(chat(llm)) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="m"))
        retried = await end_session(db384, "ashfall", "s1", offline_embedder, chat=model)
    assert (retried.summary_source, retried.llm_unreachable) == ("llm", None)
    assert retried.extraction is not None and retried.extraction.entities_added == ("osric",)
    assert await semantic_memory.sessions.waiting_for_llm() == []
    assert await semantic_memory.log.unextracted("s1") == []
