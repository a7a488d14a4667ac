"""The rows of a synthetic campaign, as generated and before they are loaded. (pure)

Plain frozen dataclasses rather than the storage models: there are hundreds of thousands of
them, and they are validated by the database's own constraints when loaded.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from glyphoxa_mcp.domain.vocabulary import EntityType

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EntityRow:
    id: str
    type: EntityType
    name: str
    aliases: tuple[str, ...]
    attributes: dict[str, Any]
    secret: bool
    known_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RelationshipRow:
    source_id: str
    target_id: str
    rel_type: str
    provenance: dict[str, Any]
    secret: bool
    known_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FactRow:
    subject_id: str | None
    text: str
    session_id: str
    story_day: int
    story_label: str
    occurred_at: datetime
    provenance: dict[str, Any]
    secret: bool
    known_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: str
    title: str
    started_at: datetime
    ended_at: datetime | None
    summary: str | None


@dataclass(frozen=True, slots=True)
class SceneRow:
    session_id: str
    started_at: datetime
    location_id: str
    # Sorted, as the database keeps who hears a line.
    present: tuple[str, ...]
    title: str


@dataclass(frozen=True, slots=True)
class EntryRow:
    session_id: str
    source_key: str
    speaker_id: str
    speaker_name: str
    text: str
    npc_id: str | None
    spoken_at: datetime
    duration_ms: int
    # The known entities this line names, speaker included: what `process` would link.
    mentions: tuple[str, ...]
    topic: int
    subtopic: int


@dataclass(frozen=True, slots=True)
class ChunkRow:
    session_id: str
    content: str
    # Positions in the dataset's entries; the loader turns them into database ids.
    entries: tuple[int, ...]
    speaker_ids: tuple[str, ...]
    npc_ids: tuple[str, ...]
    entity_ids: tuple[str, ...]
    topics: tuple[str, ...]
    started_at: datetime
    ended_at: datetime


class Weighted(Generic[T]):
    """Draws from a sequence with Zipf-like weights: a few items (the campaign's central
    characters and places) come up far more often than the rest, as in real play."""

    def __init__(self, items: Sequence[T], exponent: float = 0.8) -> None:
        if not items:
            raise ValueError("nothing to draw from")
        self.items = list(items)
        self._cumulative = list(
            itertools.accumulate(1 / (rank + 1) ** exponent for rank in range(len(items)))
        )

    def draw(self, rng: random.Random) -> T:
        point = rng.random() * self._cumulative[-1]
        return self.items[bisect.bisect_right(self._cumulative, point)]
