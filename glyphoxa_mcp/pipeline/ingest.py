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
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.scene_markers import resolved_scenes
from glyphoxa_mcp.recall.entity_resolver import EntityResolver
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
    """The lines, those whose speaker no NPC is given for but who is named as one of the
    campaign's NPCs (its name, an alias or its id: "Vesk Harrow", a plain transcript's
    speaker) given that NPC: what it says it hears. (pure)"""
    # Who speaks is a person: the campaign's NPCs and players, among whom a name is one.
    resolver = EntityResolver([e for e in entities if e.type in PEOPLE])
    npc_of: dict[tuple[str, str], str | None] = {}
    spoken = []
    for entry in entries:
        if entry.npc_id is None:
            speaker = (entry.speaker_name, entry.speaker_id)
            if speaker not in npc_of:
                npc_of[speaker] = _npc_named(resolver, entry.speaker_name) or _npc_named(
                    resolver, entry.speaker_id
                )
            npc = npc_of[speaker]
            if npc is not None:
                entry = entry.model_copy(update={"npc_id": npc})
        spoken.append(entry)
    return spoken


def _npc_named(resolver: EntityResolver, name: str) -> str | None:
    """The NPC `name` names alone (a player, or a name two entities share, names none)."""
    try:
        entity = resolver.resolve(name)
    except InvalidInputError:
        return None
    return entity.id if entity.type is EntityType.NPC else None
