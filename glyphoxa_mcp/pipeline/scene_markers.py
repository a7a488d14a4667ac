"""Scenes as a transcript names them, made scenes to store: the location and the NPCs present
resolved to the campaign's entities by name, alias or id. (pure)"""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_mcp.domain.models import Entity, NewEntry
from glyphoxa_mcp.domain.scenes import Scene, SceneMarker
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.entity_resolver import EntityResolver


def resolved_scenes(
    session_id: str,
    entries: Sequence[NewEntry],
    openings: Sequence[tuple[int, SceneMarker]],
    entities: Sequence[Entity],
) -> list[Scene]:
    """A scene for each marker, starting when the first of its lines (`openings`: the index
    in `entries` of each scene's first line) was spoken. A location must be a location and
    everyone named present an NPC; a player named present is left out (players are always
    present). Every problem is reported, each with where its marker was written."""
    resolver = EntityResolver(entities)
    scenes: list[Scene] = []
    problems: list[str] = []
    started: dict[object, str] = {}
    for index, marker in openings:
        try:
            scene = _resolved(session_id, entries[index], marker, resolver)
        except InvalidInputError as exc:
            problems.append(exc.message)
            continue
        if scene.started_at in started:
            problems.append(
                f"{marker.source}: this scene's first line is spoken at the same time as the "
                f"first line of the scene at {started[scene.started_at]}; scenes need lines "
                "spoken at different times."
            )
            continue
        started[scene.started_at] = marker.source
        scenes.append(scene)
    if problems:
        raise InvalidInputError("\n".join(problems))
    return scenes


def _resolved(
    session_id: str, first: NewEntry, marker: SceneMarker, resolver: EntityResolver
) -> Scene:
    where = marker.source
    location_id = None
    if marker.location is not None:
        place = resolver.resolve(marker.location, f"{where}: scene.location")
        if place.type is not EntityType.LOCATION:
            raise InvalidInputError(
                f"{where}: scene.location: {place.name!r} is a {place.type.value}, not a location."
            )
        location_id = place.id
    present: list[str] = []
    for name in marker.present:
        who = resolver.resolve(name, f"{where}: scene.present")
        if who.type is EntityType.PLAYER:
            continue
        if who.type is not EntityType.NPC:
            raise InvalidInputError(
                f"{where}: scene.present: {who.name!r} is a {who.type.value}; name the NPCs "
                "present (the players always are)."
            )
        if who.id not in present:
            present.append(who.id)
    return Scene(
        session_id=session_id,
        started_at=first.spoken_at,
        location_id=location_id,
        present=tuple(present),
        title=marker.title,
    )
