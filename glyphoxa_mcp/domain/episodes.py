"""A session remembered in the graph: its episode entity, and how it is named to a viewer
who may not read its title. (pure)"""

from __future__ import annotations

from glyphoxa_mcp.domain.models import Entity
from glyphoxa_mcp.domain.vocabulary import EntityType

EPISODE_PREFIX = "episode-"
MAX_ID = 128


def episode_id(session_id: str) -> str:
    return f"{EPISODE_PREFIX}{session_id}"[:MAX_ID]


def episode_name(title: str | None, session_id: str) -> str:
    return f"Session: {title or session_id}"


def session_of(entity: Entity) -> str | None:
    """The session an episode entity remembers; None for any other entity."""
    session_id = entity.attributes.get("session_id")
    if entity.type is not EntityType.EVENT or not isinstance(session_id, str):
        return None
    return session_id if entity.id == episode_id(session_id) else None


def untitled_name(entity: Entity) -> str:
    """An episode named by its date alone ("the session of 2026-03-21"), for a viewer who
    may not read its title."""
    date = entity.attributes.get("date")
    return f"the session of {date}" if isinstance(date, str) and date else "a past session"
