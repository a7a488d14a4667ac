"""Getting transcripts in: a whole file at once, or live, one utterance at a time.

Idempotent: every utterance has a source key (derived from its time, speaker and words, or
given), so ingesting the same file again adds nothing, and a run cut short can simply be
run again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS, CorrectorCache
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.correction.spans import apply_corrections, phonetic_spans
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import Entity, Entry, NewEntry, NewSession, Word, build

# How often a live session reads the campaign's names again.
NAMES_REFRESH_S = 30.0


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
    """Record a session as it is played: one utterance at a time, each stored at once, with
    misheard names put back at once (the phonetic stage), so the hot context an NPC reads
    during play already has them right."""

    def __init__(
        self,
        memory: CampaignMemory,
        session_id: str,
        correctors: CorrectorCache = SHARED_CORRECTORS,
    ) -> None:
        self.memory = memory
        self.session_id = session_id
        self._correctors = correctors
        self._names: Sequence[Entity] = ()
        self._names_read_at: float | None = None

    async def _corrector(self) -> PhoneticCorrector:
        # The names are read again now and then (new entities appear during play); the
        # prepared index is rebuilt only when they changed.
        now = time.monotonic()
        if self._names_read_at is None or now - self._names_read_at > NAMES_REFRESH_S:
            self._names = await self.memory.queries.entity_names()
            self._names_read_at = now
        return self._correctors.for_entities(self._names)

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
        stored = await self.memory.log.append(self.session_id, entry)
        if stored.text != stored.raw_text:
            return stored  # the caller corrected it already
        spans = phonetic_spans((await self._corrector()).correct(stored.raw_text))
        if not spans or spans == stored.corrections:
            return stored
        corrected = apply_corrections(stored.raw_text, spans)
        await self.memory.log.set_corrected([(stored.id, corrected, spans)])
        return stored.model_copy(update={"text": corrected, "corrections": spans})
