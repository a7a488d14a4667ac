"""Getting a whole transcript in at once (live recording is `recording.recorder`).

Idempotent: every utterance has a source key (derived from its time, speaker and words, or
given), so ingesting the same file again adds nothing, and a run cut short can simply be
run again.
"""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_mcp.correction.known_names import PEOPLE
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import Entity, NewEntry, NewSession, build
from glyphoxa_mcp.domain.reports import IngestReport
from glyphoxa_mcp.domain.scenes import SceneMarker
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.scene_markers import resolved_scenes
from glyphoxa_mcp.recall.names import compact
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory


async def ingest_entries(
    db: Database,
    campaign_id: str,
    session_id: str,
    entries: Sequence[NewEntry],
    *,
    title: str | None = None,
    scenes: Sequence[tuple[int, SceneMarker]] = (),
) -> IngestReport:
    """Store a transcript's utterances and the scenes it starts (`scenes`: the index in
    `entries` of each one's first line) in one transaction, creating the campaign and the
    session as needed. A scene naming what the campaign does not hold stores nothing."""
    async with db.transaction() as tx:
        await Campaigns(tx).ensure(campaign_id)
        memory = CampaignMemory(tx, campaign_id)
        known = await memory.known_entities()
        entries = spoken_by_npcs(entries, known)
        made = resolved_scenes(session_id, entries, scenes, known) if scenes else []
        started = min((e.spoken_at for e in entries), default=None)
        await memory.sessions.upsert(
            build(NewSession, id=session_id, title=title, started_at=started)
        )
        added = await memory.log.append_many(session_id, entries)
        await memory.scenes.record(made)
    return IngestReport(session_id, len(entries), len(added), len(made))


def spoken_by_npcs(entries: Sequence[NewEntry], entities: Sequence[Entity]) -> list[NewEntry]:
    """The lines, each with no NPC given whose speaker's name (or else id) is the name, an
    alias or the id of one NPC and of no other person of the campaign ("Vesk Harrow:" in a
    plain transcript, whose speaker id is "vesk-harrow") given to that NPC, so that it hears
    what it said. (pure)"""
    people: dict[str, dict[str, Entity]] = {}
    for entity in entities:
        if entity.type in PEOPLE:
            for spelling in (entity.name, *entity.aliases, entity.id):
                people.setdefault(compact(spelling), {})[entity.id] = entity

    def npc_named(name: str) -> str | None:
        named = list(people.get(compact(name), {}).values())
        if len(named) != 1 or named[0].type is not EntityType.NPC:
            return None
        return named[0].id

    npc_of: dict[tuple[str, str], str | None] = {}
    spoken = []
    for entry in entries:
        if entry.npc_id is None:
            speaker = (entry.speaker_name, entry.speaker_id)
            if speaker not in npc_of:
                npc_of[speaker] = npc_named(entry.speaker_name) or npc_named(entry.speaker_id)
            npc = npc_of[speaker]
            if npc is not None:
                entry = entry.model_copy(update={"npc_id": npc})
        spoken.append(entry)
    return spoken
