"""Ending a session: indexed, summarised, and remembered as an episode in the graph.

Offline, the summary is extractive and the episode links the known entities that spoke or
were named (no facts are invented). Running it again updates the same summary and episode.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.pipeline.summary import extractive_summary
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import NewEntity, NewRelationship, Provenance
from glyphoxa_mcp.storage.vocabulary import EntityType

# Taking part is inferred from speaking or being named: likely, not certain.
PARTICIPATION = 0.8


@dataclass(frozen=True)
class EndReport:
    session_id: str
    ended_at: datetime
    summary: str
    episode_id: str
    participants: tuple[str, ...]


def episode_id(session_id: str) -> str:
    return f"episode-{session_id}"[:128]


async def end_session(
    db: Database,
    campaign_id: str,
    session_id: str,
    embedder: Embedder,
    ended_at: datetime | None = None,
) -> EndReport:
    memory = CampaignMemory(db, campaign_id)
    session = await memory.sessions.get(session_id)
    entries = await memory.log.entries(session_id)
    await process_session(memory, embedder, session_id)
    known = [e for e in await memory.queries.entity_names() if e.id != episode_id(session_id)]
    known_ids = {e.id for e in known}
    pattern = NamePattern.of_entities(known)
    summary = extractive_summary(entries, pattern, {e.id: e.name for e in known})
    end = ended_at or (entries[-1].spoken_at if entries else datetime.now(UTC))
    said = " ".join(e.text for e in entries)
    spoke = " ".join(e.speaker_name for e in entries)
    participants = tuple(
        dict.fromkeys(
            [e.npc_id for e in entries if e.npc_id in known_ids]
            + pattern.owners_in(spoke)
            + pattern.owners_in(said)
        )
    )
    async with db.transaction() as tx:
        writing = CampaignMemory(tx, campaign_id)
        await writing.sessions.end(session_id, end)
        await writing.sessions.set_summary(session_id, summary, "extractive")
        episode = await writing.graph.upsert_entity(
            NewEntity(
                id=episode_id(session_id),
                type=EntityType.EVENT,
                name=f"Session: {session.title or session_id}",
                attributes={
                    "session_id": session_id,
                    "date": end.date().isoformat(),
                    "summary": summary,
                },
            )
        )
        places = {e.id for e in known if e.type is EntityType.LOCATION}
        for participant in participants:
            # A place does not take part; the episode happened there.
            source, rel_type, target = (
                (episode.id, "LOCATED_AT", participant)
                if participant in places
                else (participant, "PARTICIPATED_IN", episode.id)
            )
            await writing.graph.upsert_relationship(
                NewRelationship(
                    source_id=source,
                    target_id=target,
                    rel_type=rel_type,
                    provenance=Provenance(
                        session_id=session_id, confidence=PARTICIPATION, source="inferred"
                    ),
                )
            )
    return EndReport(session_id, end, summary, episode.id, participants)
