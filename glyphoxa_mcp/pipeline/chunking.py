"""Cutting a session's transcript into passages for the semantic index. (pure)

A passage ends at a scene break (a long pause) or when it reaches its size. By default a
passage is three lines and the next starts one line later, so every utterance is indexed
together with the two before it: a line is often an answer ("Five years already!") whose
subject is in the question before it. Measured on LoCoMo (BENCHMARKS.md), this finds more
evidence within the first ten lines returned than six-line passages overlapping by one.
Passages keep the speaker labels, and each records the entries it covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from glyphoxa_mcp.domain.models import Entry


@dataclass(frozen=True)
class ChunkingPolicy:
    max_lines: int = 3
    max_words: int = 160
    overlap_lines: int = 2
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
