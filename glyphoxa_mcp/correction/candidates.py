"""Windows of a line heard as names, and which of them are put back. (pure)

Names spelled right are fixed points; of the windows that sound like a name, the best
scoring that overlap nothing taken win.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from glyphoxa_mcp.correction.name_index import PreparedName

# Why a window that sounds like a name is ordinary speech after all (phonetic.py).
Guard = Literal[
    "determiner",
    "vocative",
    "common word",
    "inflected",
    "loose edge",
    "ambiguous",
]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A window [start, end) of a line and the name it sounds (or is spelled) like."""

    score: float
    start: int
    end: int
    name: PreparedName
    guard: Guard | None

    def overlaps(self, start: int, end: int) -> bool:
        return self.start < end and start < self.end


def chosen(text: str, spelled: Sequence[Candidate], found: Sequence[Candidate]) -> list[Candidate]:
    """The corrections to make in `text`, in order: names spelled right (fixed points,
    re-cased where needed) and the windows `found` sounding like names that win."""
    picked = [c for c in spelled if c.guard is None and c.name.name.text != text[c.start : c.end]]
    taken: list[Candidate] = list(spelled)
    for candidate in sorted(found, key=rank):
        if any(candidate.overlaps(t.start, t.end) for t in taken):
            continue
        # A common word is left alone, and does not keep a longer window that overlaps it
        # from winning.
        if candidate.guard != "common word":
            taken.append(candidate)
        if candidate.guard is None:
            picked.append(candidate)
    return sorted(picked, key=lambda c: c.start)


def rank(candidate: Candidate) -> tuple[float, int]:
    """Best score first; of equal ones, the longer window."""
    return (-candidate.score, candidate.start - candidate.end)
