"""Getting transcripts in: a whole file at once, or live, one utterance at a time.

Idempotent: every utterance has a source key (derived from its time, speaker and words, or
given), so ingesting the same file again adds nothing, and a run cut short can simply be
run again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import Entry, NewEntry, NewSession, Word, build


@dataclass(frozen=True)
class IngestReport:
    session_id: str
    read: int
    added: int


async def ingest_entries(
    db: Database,
    campaign_id: str,
    session_id: str,
    entries: Sequence[NewEntry],
    *,
    title: str | None = None,
) -> IngestReport:
    """Store a transcript's utterances (in one transaction) in the session, creating the
    campaign and the session as needed."""
    async with db.transaction() as tx:
        await Campaigns(tx).ensure(campaign_id)
        memory = CampaignMemory(tx, campaign_id)
        started = min((e.spoken_at for e in entries), default=None)
        await memory.sessions.upsert(
            build(NewSession, id=session_id, title=title, started_at=started)
        )
        added = await memory.log.append_many(session_id, entries)
    return IngestReport(session_id, len(entries), len(added))


class LiveSession:
    """Record a session as it is played: one utterance at a time, each stored at once."""

    def __init__(self, memory: CampaignMemory, session_id: str) -> None:
        self.memory = memory
        self.session_id = session_id

    @classmethod
    async def start(
        cls,
        db: Database,
        campaign_id: str,
        session_id: str,
        *,
        title: str | None = None,
        started_at: datetime | None = None,
    ) -> LiveSession:
        await Campaigns(db).ensure(campaign_id)
        memory = CampaignMemory(db, campaign_id)
        await memory.sessions.upsert(
            build(NewSession, id=session_id, title=title, started_at=started_at)
        )
        return cls(memory, session_id)

    async def record(
        self,
        speaker_id: str,
        speaker_name: str,
        text: str,
        spoken_at: datetime,
        *,
        npc_id: str | None = None,
        raw_text: str | None = None,
        duration_ms: int | None = None,
        words: Sequence[Word] | None = None,
    ) -> Entry:
        entry = build(
            NewEntry,
            speaker_id=speaker_id,
            speaker_name=speaker_name,
            text=text,
            raw_text=raw_text,
            npc_id=npc_id,
            spoken_at=spoken_at,
            duration_ms=duration_ms,
            words=tuple(words) if words is not None else None,
        )
        return await self.memory.log.append(self.session_id, entry)
