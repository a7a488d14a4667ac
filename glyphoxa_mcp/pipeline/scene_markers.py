"""Scenes as a transcript names them, made scenes to store: the location and the NPCs present
resolved to the campaign's entities by name, alias or id. (pure)"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

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
            scene = resolved_scene(session_id, entries[index].spoken_at, marker, resolver)
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


def resolved_scene(
    session_id: str,
    started_at: datetime,
    marker: SceneMarker,
    resolver: EntityResolver,
    *,
    quiet: bool = False,
) -> Scene:
    """The scene `marker` names, starting at `started_at`. `quiet`, for a caller who may
    not read the campaign (the recorder): a name that fails is refused alike whatever it
    names, with no near names offered."""
    where = f"{marker.source}: " if marker.source else ""
    location_id = None
    if marker.location is not None:
        place = _entity(resolver, marker.location, f"{where}scene.location", quiet)
        if place is None or place.type is not EntityType.LOCATION:
            if quiet or place is None:
                raise _unnamed(f"{where}scene.location", marker.location, "location")
            raise InvalidInputError(
                f"{where}scene.location: {place.name!r} is a {place.type.value}, not a location."
            )
        location_id = place.id
    present: list[str] = []
    for name in marker.present:
        who = _entity(resolver, name, f"{where}scene.present", quiet)
        if who is not None and who.type is EntityType.PLAYER:
            continue
        if who is None or who.type is not EntityType.NPC:
            if quiet or who is None:
                raise _unnamed(f"{where}scene.present", name, "NPC")
            raise InvalidInputError(
                f"{where}scene.present: {who.name!r} is a {who.type.value}; name the NPCs "
                "present (the players always are)."
            )
        if who.id not in present:
            present.append(who.id)
    return Scene(
        session_id=session_id,
        started_at=started_at,
        location_id=location_id,
        present=tuple(present),
        title=marker.title,
    )


def _entity(resolver: EntityResolver, name: str, field: str, quiet: bool) -> Entity | None:
    """The entity `name` names; None, when `quiet`, for none or several."""
    try:
        return resolver.resolve(name, field)
    except InvalidInputError:
        if quiet:
            return None
        raise


def _unnamed(field: str, name: str, kind: str) -> InvalidInputError:
    return InvalidInputError(
        f"{field}: {name!r} names no {kind} of this campaign (give its id, name or alias).",
        field=field,
    )
