"""Cutting a session's transcript into passages for the semantic index. (pure)

A passage ends at a scene break (a long pause) or when it reaches its size; consecutive
passages overlap by a line so that an exchange split at the edge is found from either side.
Passages keep the speaker labels, and each records the entries it covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from glyphoxa_mcp.storage.models import Entry


@dataclass(frozen=True)
class ChunkingPolicy:
    max_lines: int = 6
    max_words: int = 160
    overlap_lines: int = 1
    scene_break: timedelta = timedelta(minutes=5)


DEFAULT_POLICY = ChunkingPolicy()


@dataclass(frozen=True)
class Passage:
    entries: tuple[Entry, ...]

    @property
    def content(self) -> str:
        return "\n".join(f"{e.speaker_name}: {e.text}" for e in self.entries)

    @property
    def started_at(self) -> datetime:
        return self.entries[0].spoken_at

    @property
    def ended_at(self) -> datetime:
        return self.entries[-1].spoken_at


def _words(entry: Entry) -> int:
    return len(entry.text.split())


def scenes(entries: Sequence[Entry], scene_break: timedelta) -> list[list[Entry]]:
    groups: list[list[Entry]] = []
    for entry in entries:
        if groups and entry.spoken_at - groups[-1][-1].spoken_at <= scene_break:
            groups[-1].append(entry)
        else:
            groups.append([entry])
    return groups


def passages(entries: Sequence[Entry], policy: ChunkingPolicy = DEFAULT_POLICY) -> list[Passage]:
    """Passages in order; entries must be in the order they were spoken."""
    out: list[Passage] = []
    for scene in scenes(entries, policy.scene_break):
        start = 0
        while start < len(scene):
            end, words = start, 0
            while end < len(scene) and end - start < policy.max_lines:
                if end > start and words + _words(scene[end]) > policy.max_words:
                    break
                words += _words(scene[end])
                end += 1
            out.append(Passage(tuple(scene[start:end])))
            if end >= len(scene):
                break
            start = max(end - policy.overlap_lines, start + 1)
    return out
