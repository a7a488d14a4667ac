"""Scenes: a session is a sequence of them, each a span of its time with a location and the
NPCs present (the players are always present and are not listed).

A `SceneMarker` is a scene as a transcript or the DM names it (names, aliases or ids, not
yet resolved, with where it was written for errors); a `Scene` is one stored, its location
and the NPCs present resolved to entity ids. A line belongs to the scene that started last
at or before it was spoken.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, TypeVar

from pydantic import AwareDatetime, Field, StringConstraints

from glyphoxa_mcp.domain.models import Frozen, Key, Name

# The most NPCs one scene may name present: a crowd is a location, not a list.
MAX_PRESENT = 64
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class SceneMarker(Frozen):
    """A scene as written: where, who besides the players, and a title, each optional."""

    location: Name | None = None
    present: tuple[Name, ...] = Field(default=(), max_length=MAX_PRESENT)
    title: Title | None = None
    source: str = Field(default="", description="Where it was written (file:line), for errors.")


class Scene(Frozen):
    session_id: Key
    started_at: AwareDatetime
    location_id: Key | None = None
    present: tuple[Key, ...] = ()
    title: Title | None = None
    word: tuple[tuple[Key, Key | None], ...] = Field(
        default=(),
        description="Who heard of the scene without being there, each with the NPC who told "
        "them (None: word going around); kept by the database (sql/032).",
    )

    def heard_of_by(self, npc_id: str) -> tuple[bool, str | None]:
        """Whether word of the scene reached `npc_id`, and from whom."""
        for hearer, teller in self.word:
            if hearer == npc_id:
                return True, teller
        return False, None


def scene_of(scenes: list[Scene], spoken_at: datetime) -> Scene | None:
    """The scene a line spoken at `spoken_at` belongs to, of a session's `scenes` in order."""
    found = None
    for scene in scenes:
        if scene.started_at > spoken_at:
            break
        found = scene
    return found


@dataclass(frozen=True)
class SpokenBy:
    """One NPC's lines in a session: when the session's first line was said (None: it has
    none), when the NPC spoke, and when the lines the DM kept from it were said (the DM's
    own lines aside)."""

    first_line_at: datetime | None
    spoke_at: Sequence[datetime]
    unheard_at: Sequence[datetime] = ()


@dataclass(frozen=True)
class SceneKnown:
    """What one NPC knows of one scene of a session (`scene` None: the lines outside any
    scene): it was there, it heard of it (from `teller`, None: word going around), or
    neither. `missed`: the DM kept a line of it from this NPC (one it was there for, or one
    whose hearers the DM chose without it: its gist is not this NPC's to hear of either)."""

    scene: Scene | None
    witnessed: bool
    heard: bool = False
    teller: str | None = None
    missed: bool = False


def known_scenes(scenes: Sequence[Scene], npc_id: str, spoken: SpokenBy) -> list[SceneKnown]:
    """What `npc_id` knows of each scene of a session, in order (`scenes`: the session's, in
    order). An NPC was at a scene it is named present in (an NPC who speaks in a scene is
    made present by the database, unless the DM took it out); the lines outside any scene
    (before the first, or all of a session without scenes) it heard when it spoke in the
    session at all, as the database rules for the lines themselves (sql/032)."""
    ordered = list(scenes)
    missed = {
        scene.started_at if scene else None
        for scene in (scene_of(ordered, at) for at in spoken.unheard_at)
    }
    known: list[SceneKnown] = []
    first_line_at = spoken.first_line_at
    if first_line_at is not None and (not scenes or first_line_at < scenes[0].started_at):
        known.append(SceneKnown(None, witnessed=bool(spoken.spoke_at), missed=None in missed))
    for scene in scenes:
        kept_from = scene.started_at in missed
        if npc_id in scene.present:
            known.append(SceneKnown(scene, witnessed=True, missed=kept_from))
        else:
            heard, teller = scene.heard_of_by(npc_id)
            known.append(SceneKnown(scene, False, heard, teller, missed=kept_from))
    return known


T = TypeVar("T")


def scene_groups(
    scenes: Sequence[Scene], items: Sequence[T], spoken_at: Callable[[T], datetime]
) -> list[tuple[Scene | None, list[T]]]:
    """`items` (lines, in the order said) by the scene each belongs to, scenes in order: first
    the lines outside any scene (before the first, or all of a session without scenes: the
    group of None, there only when it holds a line or the session has no scenes), then one
    group per scene, empty or not. The lines before the first scene are no scene's: those
    present in the first did not hear them (sql/032)."""
    ordered = sorted(scenes, key=lambda s: s.started_at)
    by_start: dict[datetime | None, list[T]] = {scene.started_at: [] for scene in ordered}
    outside: list[T] = []
    for item in items:
        scene = scene_of(ordered, spoken_at(item))
        (outside if scene is None else by_start[scene.started_at]).append(item)
    groups: list[tuple[Scene | None, list[T]]] = []
    if outside or not ordered:
        groups.append((None, outside))
    groups += [(scene, by_start[scene.started_at]) for scene in ordered]
    return groups
