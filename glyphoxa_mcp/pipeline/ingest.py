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
from glyphoxa_mcp.domain.scenes import SceneMarker
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.scene_markers import resolved_scenes
from glyphoxa_mcp.recall.names import compact
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.knowledge_graph import Person
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
        if any(entry.npc_id is None for entry in entries):
            entries = spoken_by_npcs(entries, await memory.graph.people())
        made = (
            resolved_scenes(session_id, entries, scenes, await memory.known_entities())
            if scenes
            else []
        )
        started = min((e.spoken_at for e in entries), default=None)
        await memory.sessions.upsert(
            build(NewSession, id=session_id, title=title, started_at=started)
        )
        added = await memory.log.append_many(session_id, entries)
        await memory.scenes.record(made)
    return IngestReport(session_id, len(entries), len(added), len(made))


def spoken_by_npcs(entries: Sequence[NewEntry], people: Sequence[Person]) -> list[NewEntry]:
    """The lines, each with no NPC given whose speaker's name (or else id) is a name of one
    NPC and of no other of the campaign's `people` (name, alias or id: "Vesk Harrow:" in a
    plain transcript, whose speaker id is "vesk-harrow") given to that NPC, so that it hears
    what it said. (pure)"""
    named: dict[str, dict[str, Person]] = {}
    for person in people:
        for spelling in person.names:
            named.setdefault(compact(spelling), {})[person.id] = person

    def npc_named(name: str) -> str | None:
        found = list(named.get(compact(name), {}).values())
        if len(found) != 1 or found[0].type is not EntityType.NPC:
            return None
        return found[0].id

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
