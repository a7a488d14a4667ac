"""Getting a whole transcript in at once (live recording is `recording.recorder`).

Idempotent: every utterance has a source key (derived from its time, speaker and words, or
given), so ingesting the same file again adds nothing, and a run cut short can simply be
run again.
"""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewEntry, NewSession, build
from glyphoxa_mcp.domain.reports import IngestReport
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory


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
