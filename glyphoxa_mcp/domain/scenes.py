"""Scenes: a session is a sequence of them, each a span of its time with a location and the
NPCs present (the players are always present and are not listed).

A `SceneMarker` is a scene as a transcript or the DM names it (names, aliases or ids, not
yet resolved, with where it was written for errors); a `Scene` is one stored, its location
and the NPCs present resolved to entity ids. A line belongs to the scene that started last
at or before it was spoken.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

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


def scene_of(scenes: list[Scene], spoken_at: datetime) -> Scene | None:
    """The scene a line spoken at `spoken_at` belongs to, of a session's `scenes` in order."""
    found = None
    for scene in scenes:
        if scene.started_at > spoken_at:
            break
        found = scene
    return found
