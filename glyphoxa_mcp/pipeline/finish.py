"""Ending a session: indexed, summarised, and remembered as an episode in the graph.

With an LLM, names are corrected in two stages, what the session added is extracted into the
graph (the lines extraction during play has not read yet), and the summary is written by the
model, a part per scene. Offline, the summary is chosen from the lines and retold
(pipeline/summary.py), a part per scene too, and the episode links the known entities that
spoke or were named (no facts are invented). When the LLM cannot be reached, the session
ends the offline way, marked for `session end --retry-llm`. The session's temporary facts
are cleared. Running it again updates the same summary and episode.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS
from glyphoxa_mcp.correction.llm_stage import LLMNameCorrector
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.episodes import episode_id, episode_name
from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.models import (
    Entity,
    Entry,
    NewEntity,
    NewRelationship,
    Provenance,
    narrowest,
)
from glyphoxa_mcp.domain.reports import EndReport, ExtractionReport
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.domain.session_summaries import SummaryPart, render_summary
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import GlyphoxaError, ProviderError
from glyphoxa_mcp.pipeline.extraction import extract_session
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.pipeline.llm_summary import llm_summary
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.pipeline.summary import summarise
from glyphoxa_mcp.providers.chat import ChatModel
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.recall.names_read import campaign_names_digest
from glyphoxa_mcp.storage.memory import CampaignMemory

log = logging.getLogger(__name__)

# Taking part is inferred from speaking or being present, a mention from being named:
# likely, not certain.
PARTICIPATION = 0.8


async def end_session(
    db: Database,
    campaign_id: str,
    session_id: str,
    embedder: Embedder,
    ended_at: datetime | None = None,
    *,
    chat: ChatModel | None = None,
    review_threshold: float | None = None,
) -> EndReport:
    """`review_threshold` None: the campaign's own (below it, extracted knowledge waits for
    the DM's review)."""
    memory = CampaignMemory(db, campaign_id)
    session = await memory.sessions.get(session_id)
    campaign = await memory.campaign()
    shared = campaign.knowledge is Knowledge.SHARED
    if review_threshold is None:
        review_threshold = campaign.review_threshold
    llm = LLMNameCorrector(chat) if chat is not None else None
    processed = await process_session(memory, embedder, session_id, llm=llm)
    # Read after processing: the summary quotes the corrected text. What the DM keeps to
    # themselves is left out of all that is made from the session (summary, episode,
    # extraction), as every NPC may read those.
    entries = [e for e in await memory.log.entries(session_id) if not e.dm_only]
    extraction: ExtractionReport | None = None
    parts: list[SummaryPart] | None = None
    unreachable: str | None = None
    if chat is not None:
        try:
            unread = [e for e in await memory.log.unextracted(session_id) if not e.dm_only]
            extraction = await extract_session(
                memory, chat, session_id, unread, review_threshold, embedder=embedder
            )
        except ProviderError as exc:
            unreachable = str(exc)
    known = [e for e in await memory.queries.entity_names() if e.id != episode_id(session_id)]
    names_of = {e.id: e.name for e in known}
    pattern = NamePattern.of_entities(known)
    scenes = await memory.scenes.of_session(session_id)
    if chat is not None and unreachable is None:
        try:
            title = session.title or session_id
            parts = await llm_summary(chat, title, entries, scenes, names_of)
        except ProviderError as exc:
            unreachable = str(exc)
        if unreachable is None and processed.llm_failures:
            unreachable = (
                f"{counted(processed.llm_failures, 'line')} could not be checked by the LLM"
            )
    summary_source: Literal["llm", "extractive"] = "llm"
    if parts is None:
        parts = await summarise(entries, scenes, embedder, pattern, names_of)
        summary_source = "extractive"
    summary = render_summary(parts)
    end = ended_at or (entries[-1].spoken_at if entries else datetime.now(UTC))
    links = episode_links(entries, scenes, known, pattern, extraction)
    async with db.transaction() as tx:
        writing = CampaignMemory(tx, campaign_id)
        await writing.sessions.end(session_id, end)
        await writing.sessions.set_summary(
            session_id, summary, summary_source, llm_pending=unreachable is not None
        )
        await writing.summary_parts.replace(session_id, parts)
        cleared = await writing.session_facts.clear(session_id)
        episode = await writing.graph.upsert_entity(
            NewEntity(
                id=episode_id(session_id),
                type=EntityType.EVENT,
                name=episode_name(session.title, session_id),
                attributes={
                    "session_id": session_id,
                    "date": end.date().isoformat(),
                    # Every NPC may know the episode: in a witnessed campaign each reads
                    # what it may know of the session through get_session_summary instead.
                    **({"summary": summary} if shared else {}),
                },
            ),
            keep_visibility=True,
        )
        by_id = {e.id: e for e in known}
        for entity_id, rel_type in links:
            # A place does not take part or get mentioned in it: the episode happened there.
            source, target = (
                (episode.id, entity_id) if rel_type == "LOCATED_AT" else (entity_id, episode.id)
            )
            await writing.graph.propose_relationship(
                NewRelationship(
                    source_id=source,
                    target_id=target,
                    rel_type=rel_type,
                    provenance=Provenance(
                        session_id=session_id, confidence=PARTICIPATION, source="inferred"
                    ),
                    # Never known more widely than the entity it links: a secret faction
                    # named at the table is not "known by everyone" through its episode.
                    visibility=narrowest(by_id[entity_id].visibility, episode.visibility),
                )
            )
        if session.dm_only:
            await writing.curation.hide_learned_in(session_id, episode.id)
        await writing.curation.teach_witnessed(session_id)
    await embed_new(db, embedder, campaign_id)  # the episode's relationships
    # The session's names are the campaign's now: what was read in texts under the names
    # before is never found again (sql/039). A cache: the session has ended all the same.
    try:
        names = await memory.entity_names()
        await memory.names_read.forget_all_but(
            campaign_names_digest(names.entities, SHARED_CORRECTORS.settings)
        )
    except GlyphoxaError as exc:
        log.warning("names read under the campaign's old names are kept for now: %s", exc)
    return EndReport(
        session_id,
        end,
        summary,
        summary_source,
        episode.id,
        tuple(entity_id for entity_id, rel_type in links if rel_type == "PARTICIPATED_IN"),
        extraction,
        mentioned=tuple(entity_id for entity_id, rel_type in links if rel_type == "MENTIONED_IN"),
        llm_unreachable=unreachable,
        session_facts_cleared=tuple(cleared),
    )


def episode_links(
    entries: Sequence[Entry],
    scenes: Sequence[Scene],
    known: Sequence[Entity],
    pattern: NamePattern,
    extraction: ExtractionReport | None,
) -> list[tuple[str, str]]:
    """How each known entity the session involved is linked to its episode: PARTICIPATED_IN
    for who spoke or was present in a scene, LOCATED_AT (from the episode) for where its
    scenes were, MENTIONED_IN for what was only named (in its lines, or by extraction).
    (pure)"""
    by_id = {e.id: e for e in known}
    people = (EntityType.NPC, EntityType.PLAYER)
    spoke = " ".join(e.speaker_name for e in entries)
    took_part = dict.fromkeys(
        [e.npc_id for e in entries if e.npc_id in by_id]
        + [e.speaker_id for e in entries if e.speaker_id in by_id]
        + pattern.owners_in(spoke)
        + [npc for scene in scenes for npc in scene.present if npc in by_id]
    )
    took_part = {i: None for i in took_part if by_id[i].type in people}
    settings = dict.fromkeys(scene.location_id for scene in scenes if scene.location_id in by_id)
    named = pattern.owners_in(" ".join(e.text for e in entries))
    named += [i for i in (extraction.mentioned if extraction else ()) if i in by_id]
    mentioned = dict.fromkeys(i for i in named if i not in took_part and i not in settings)
    return (
        [(i, "PARTICIPATED_IN") for i in took_part]
        + [(i, "LOCATED_AT") for i in settings]
        + [(i, "MENTIONED_IN") for i in mentioned]
    )
