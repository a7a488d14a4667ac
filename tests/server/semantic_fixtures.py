"""Two short sessions of the village campaign, chunked and embedded with the offline model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.models import NewChunk, NewEntry, NewFact, NewSession, Provenance
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory

S1_START = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
S2_START = datetime(2026, 3, 8, 19, 0, tzinfo=UTC)

SESSION_1 = [
    ("mira", "Mira", None, "Grimjaw, have you seen the merchant caravan?"),
    (
        "grimjaw",
        "Grimjaw",
        "grimjaw",
        "The caravan left for Saltmere three days ago, heavy with iron.",
    ),
    ("tomas", "Tomas", None, "Then we follow the wagons to the coast."),
    ("grimjaw", "Grimjaw", "grimjaw", "I promised to forge you a new sword when you return."),
    ("mira", "Mira", None, "Vask whispered that the Cult meets under the Red Kettle."),
    ("tomas", "Tomas", None, "Let us keep that to ourselves for now."),
]
SESSION_2 = [
    ("mira", "Mira", None, "The bridge is out, we need another way across the river."),
    ("grimjaw", "Grimjaw", "grimjaw", "The Town Watch keeps a ferry at the old mill."),
]


async def load_sessions(memory: CampaignMemory, embedder: Embedder) -> None:
    # These sessions test search and secrecy: every NPC hears every line (tests of who
    # witnessed what set scenes of their own).
    await Campaigns(memory.db).configure_knowledge(memory.campaign_id, knowledge=Knowledge.SHARED)
    await memory.sessions.upsert(NewSession(id="s1", title="The Red Kettle", started_at=S1_START))
    await memory.sessions.upsert(NewSession(id="s2", title="High Water", started_at=S2_START))
    for session_id, start, lines in (("s1", S1_START, SESSION_1), ("s2", S2_START, SESSION_2)):
        entries = [
            NewEntry(
                speaker_id=speaker,
                speaker_name=name,
                npc_id=npc,
                text=text,
                spoken_at=start + timedelta(seconds=20 * i),
            )
            for i, (speaker, name, npc, text) in enumerate(lines)
        ]
        await memory.log.append_many(session_id, entries)
    # Session 1 is processed into chunks of two lines; session 2 is still live (L1 only).
    stored = await memory.log.entries("s1")
    pairs = [stored[i : i + 2] for i in range(0, len(stored), 2)]
    contents = ["\n".join(f"{e.speaker_name}: {e.text}" for e in pair) for pair in pairs]
    vectors = await embedder.embed(contents)
    tags = [("grimjaw",), ("grimjaw",), ("cult", "red-kettle", "vask")]
    await memory.index.upsert(
        [
            NewChunk(
                session_id="s1",
                content=content,
                embedding=vector,
                speaker_ids=tuple(sorted({e.speaker_id for e in pair})),
                npc_ids=tuple(sorted({e.npc_id for e in pair if e.npc_id})),
                entity_ids=tag,
                started_at=pair[0].spoken_at,
                ended_at=pair[-1].spoken_at,
                entry_ids=tuple(e.id for e in pair),
            )
            for pair, content, vector, tag in zip(pairs, contents, vectors, tags, strict=True)
        ]
    )


FACTS = [
    ("town-watch", "The bridge was rebuilt by the Town Watch after the flood.", 5, "s1", 1.0),
    ("grimjaw", "Grimjaw owes the smiths guild forty silver.", 2, "s1", 0.5),
    ("red-kettle", "The Red Kettle serves the best stew in the valley.", 1, None, 1.0),
    ("mira", "Mira saw Vask slip into the cult's cellar.", 6, "s1", 1.0),
]


async def load_facts(memory: CampaignMemory, embedder: Embedder) -> None:
    vectors = await embedder.embed([text for _, text, _, _, _ in FACTS])
    for (subject, text, day, session, confidence), vector in zip(FACTS, vectors, strict=True):
        await memory.graph.upsert_fact(
            NewFact(
                subject_id=subject,
                text=text,
                story_day=day,
                session_id=session,
                occurred_at=S1_START + timedelta(days=day),
                embedding=vector,
                provenance=Provenance(confidence=confidence, source="inferred"),
            )
        )
