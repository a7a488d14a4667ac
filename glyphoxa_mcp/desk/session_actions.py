"""Sessions: a transcript read and ingested, processed (names put back, passages cut and
embedded), ended (summary and episode), listed and read, its summary written or reviewed, a
line forgotten, the session deleted; and a session held while a recorder writes into it.

Processing, ending and forgetting import their part of the pipeline (the LLM stages, the
extraction's models) when they run, so that starting a command costs no more for them.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import datetime

from glyphoxa_mcp.app import App
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.models import Entry, Session, SessionFact
from glyphoxa_mcp.domain.reports import (
    EndReport,
    IngestReport,
    LineForgotten,
    ProcessReport,
    SessionDeleted,
)
from glyphoxa_mcp.pipeline.dm_summary import write_dm_summary
from glyphoxa_mcp.pipeline.ingest import ingest_entries
from glyphoxa_mcp.pipeline.transcripts import Transcript, parse_transcript
from glyphoxa_mcp.storage import deletion
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.recording_leases import recording_lease


def read_transcript(text: str, source: str, start: datetime) -> Transcript:
    """A transcript's utterances and the scenes it starts: JSON Lines, or 'Speaker: text'
    lines placed 5 s apart from `start`. (pure)"""
    return parse_transcript(text, source, start)


async def ingest_transcript(
    db: Database,
    campaign_id: str,
    session_id: str,
    transcript: Transcript,
    *,
    title: str | None = None,
) -> IngestReport:
    """The utterances and scenes stored in the session (in one transaction), the campaign
    and the session made as needed; ingesting them again adds nothing."""
    return await ingest_entries(
        db, campaign_id, session_id, transcript.entries, title=title, scenes=transcript.scenes
    )


async def process_session(
    desk: CampaignDesk,
    session_id: str,
    on_progress: Callable[[int, int], None] | None = None,
) -> ProcessReport:
    """Names put back (by the LLM too, when there is one), passages cut, linked to known
    entities and embedded; running it again stores nothing new."""
    from glyphoxa_mcp.correction.llm_stage import LLMNameCorrector
    from glyphoxa_mcp.pipeline import process

    await desk.memory.sessions.get(session_id)
    return await process.process_session(
        desk.memory,
        desk.embedder(),
        session_id,
        on_progress=on_progress,
        llm=LLMNameCorrector(desk.chat) if desk.chat else None,
    )


async def end_session(
    desk: CampaignDesk, session_id: str, ended_at: datetime | None = None
) -> EndReport:
    """The session indexed, summarised and remembered as an episode (with the LLM, when
    there is one; `ended_at` None: its last utterance)."""
    from glyphoxa_mcp.pipeline import finish

    return await finish.end_session(
        desk.db, desk.campaign_id, session_id, desk.embedder(), ended_at, chat=desk.chat
    )


async def sessions_waiting_for_llm(desk: CampaignDesk) -> list[Session]:
    """The sessions ended while the LLM could not be reached."""
    return await desk.memory.sessions.waiting_for_llm()


async def list_sessions(desk: CampaignDesk) -> list[Session]:
    """The sessions, oldest first."""
    return await desk.memory.sessions.list()


async def summaries_to_review(desk: CampaignDesk) -> list[str]:
    """The sessions whose summary waits for the DM's look, lines of them forgotten."""
    return await deletion.summaries_to_review(desk.db, desk.campaign_id)


async def get_session(desk: CampaignDesk, session_id: str) -> Session:
    return await desk.memory.sessions.get(session_id)


async def session_lines(desk: CampaignDesk, session_id: str) -> list[Entry]:
    """The session's transcript, in order."""
    return await desk.memory.log.entries(session_id)


async def session_facts(desk: CampaignDesk, session_id: str) -> list[SessionFact]:
    """The session's temporary facts (set by a recorder; cleared when it ends)."""
    await desk.memory.sessions.get(session_id)
    return await desk.memory.session_facts.of_session(session_id)


async def write_summary(desk: CampaignDesk, session_id: str, text: str) -> Session:
    """The DM's own summary of the session (and its episode's copy), kept by later line
    marks; it needs no review."""
    session = await write_dm_summary(desk.db, desk.campaign_id, session_id, text)
    await deletion.clear_summary_flag(desk.db, desk.campaign_id, session_id)
    return session


async def summary_reviewed(desk: CampaignDesk, session_id: str) -> None:
    await deletion.clear_summary_flag(desk.db, desk.campaign_id, session_id)


async def forget_line(desk: CampaignDesk, entry_id: int) -> LineForgotten:
    """A transcript line removed, with everything made of it (see pipeline/forget.py)."""
    from glyphoxa_mcp.pipeline import forget

    return await forget.forget_line(desk.db, desk.campaign_id, entry_id, desk.embedder())


async def delete_session(desk: CampaignDesk, session_id: str) -> SessionDeleted:
    """The session's lines, passages, summary and episode, and what was learned in it that
    the DM did not decide."""
    return await deletion.delete_session(desk.db, desk.campaign_id, session_id)


@contextlib.asynccontextmanager
async def recording_into(app: App, campaign_id: str, session_id: str) -> AsyncIterator[None]:
    """For the block, a recorder writes into the session: the campaign is made if need be,
    and deleting the session (a line of it, its campaign) is refused meanwhile."""
    await Campaigns(app.db).ensure(campaign_id)
    async with recording_lease(app.db, campaign_id, session_id):
        yield
