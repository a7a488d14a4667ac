"""The DM's scenes after play (issue 30): list a session's scenes, change who was present or
where, add or remove one, and say who heard one line. The database hears the lines again at
once (sql/032), running servers included."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.models import Entry
from glyphoxa_mcp.domain.scenes import Scene, SceneMarker
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.pipeline.scene_markers import resolved_scene
from glyphoxa_mcp.recall.entity_resolver import EntityResolver


@dataclass(frozen=True)
class HeardLine:
    entry: Entry
    heard_by: tuple[str, ...] | None
    """The NPCs who hear it now (None: every NPC, a shared campaign)."""


async def session_scenes(desk: CampaignDesk, session_id: str) -> list[Scene]:
    """The session's scenes, in the order they started (the session must exist)."""
    await desk.memory.sessions.get(session_id)
    return await desk.memory.scenes.of_session(session_id)


async def set_scene(
    desk: CampaignDesk,
    session_id: str,
    started_at: datetime,
    *,
    present: Sequence[str] | None = None,
    location: str | None = None,
    title: str | None = None,
) -> Scene:
    """Add the scene starting at `started_at`, or change the one that starts then: what is
    given replaces what it said (names, aliases or ids; `present` the NPCs besides the
    players), what is not given is kept."""
    await desk.memory.sessions.get(session_id)
    before = {s.started_at: s for s in await desk.memory.scenes.of_session(session_id)}.get(
        started_at
    )
    resolver = EntityResolver(await desk.memory.known_entities())
    marker = SceneMarker(
        location=location,
        present=tuple(present) if present is not None else (),
        title=title,
    )
    made = resolved_scene(session_id, started_at, marker, resolver)
    scene = Scene(
        session_id=session_id,
        started_at=started_at,
        location_id=made.location_id
        if location is not None
        else (before.location_id if before else None),
        present=made.present if present is not None else (before.present if before else ()),
        title=made.title if title is not None else (before.title if before else None),
    )
    await desk.memory.scenes.record([scene])
    [stored] = [
        s for s in await desk.memory.scenes.of_session(session_id) if s.started_at == started_at
    ]
    return stored


async def remove_scene(desk: CampaignDesk, session_id: str, started_at: datetime) -> None:
    """Remove a scene: its lines belong to the scene before it, or to none."""
    await desk.memory.sessions.get(session_id)
    if not await desk.memory.scenes.remove(session_id, started_at):
        raise NotFoundError(
            f"Session {session_id!r} has no scene starting at {started_at.isoformat()}. "
            f"`glyphoxa-mcp session scenes {session_id}` lists them."
        )


async def set_line_hearers(
    desk: CampaignDesk, entry_ids: Sequence[int], npcs: Sequence[str] | None
) -> list[HeardLine]:
    """Say who heard these lines (`npcs`: names, aliases or ids of NPCs; None: those present
    in their scene again). Each line with who hears it now."""
    if not entry_ids:
        raise InvalidInputError("Name at least one line (line:ID).", field="lines")
    npc_ids = None
    if npcs is not None:
        resolver = EntityResolver(await desk.memory.known_entities())
        npc_ids = []
        for name in npcs:
            entity = resolver.resolve(name, "heard_by")
            if entity.type is not EntityType.NPC:
                raise InvalidInputError(
                    f"heard_by: {entity.name!r} is a {entity.type.value}; name the NPCs who "
                    "heard it (the players always do).",
                    field="heard_by",
                )
            npc_ids.append(entity.id)
    changed = await desk.memory.log.set_hearers(entry_ids, npc_ids)
    return [HeardLine(entry, heard_by) for entry, heard_by in changed]


async def line_hearers(desk: CampaignDesk, session_id: str) -> dict[int, tuple[str, ...] | None]:
    """Who hears each line of the session (None: every NPC, a shared campaign)."""
    return await desk.memory.log.hearers(session_id)
