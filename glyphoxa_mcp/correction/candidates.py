"""Windows of a line heard as names, and which of them are put back. (pure)

Names spelled right are fixed points; of the windows that sound like a name, the best
scoring that overlap nothing taken win. A correction replaces a whole span that sounds like
a whole name, never part of it: a window heard as part of a longer name of its entity gives
way to the longer one, and so does a window that leaves letters of its name to a neighbour
the longer window hears ("sister ven" in "sister ven knocked", for Sister Vennacht).
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
    "everyday words",
    "part of a name",
    "another name",
    "one word",
]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A window [start, end) of a line and the name it sounds (or is spelled) like."""

    score: float
    start: int
    end: int
    name: PreparedName
    guard: Guard | None
    # Letters of the name at its start and at its end that nothing in the window stands for.
    unheard: tuple[int, int] = (0, 0)

    def overlaps(self, start: int, end: int) -> bool:
        return self.start < end and start < self.end

    def contains(self, other: Candidate) -> bool:
        return (
            self.start <= other.start
            and other.end <= self.end
            and (self.start, self.end) != (other.start, other.end)
        )


def chosen(
    text: str, spelled: Sequence[Candidate], found: Sequence[Candidate], unheard: int
) -> list[Candidate]:
    """The corrections to make in `text`, in order: names spelled right (fixed points,
    re-cased where needed) and the windows `found` sounding like names that win."""
    whole = whole_names(found, unheard)
    picked: list[Candidate] = []
    taken: list[Candidate] = []
    # A name spelled right inside a longer name misheard around it that has its words
    # ("captain toby a grell"): the longer one is put back whole, never the part alone.
    for candidate in sorted((c for c in whole if any(c.contains(s) for s in spelled)), key=rank):
        if candidate.guard is None and not any(candidate.overlaps(t.start, t.end) for t in taken):
            taken.append(candidate)
            picked.append(candidate)
    for fixed in spelled:
        if any(fixed.overlaps(t.start, t.end) for t in taken):
            continue
        taken.append(fixed)
        if fixed.guard is None and fixed.name.name.text != text[fixed.start : fixed.end]:
            picked.append(fixed)
    for candidate in sorted(whole, key=rank):
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


def whole_names(found: Sequence[Candidate], unheard: int) -> list[Candidate]:
    """The windows that may stand for a whole name: not one that is part of a window heard
    as a longer name of its entity ("grel" in "captain toby a grel"), nor one that leaves
    `unheard` letters or more of its name at an edge that a longer window of the same name
    hears ("sister ven" of Sister Vennacht when "sister ven knocked" is heard as it too)."""
    return [
        c
        for c in found
        if not any(
            d.contains(c)
            and d.name.same_entity(c.name)
            and (
                d.name.word_count > c.name.word_count
                or (d.end > c.end and c.unheard[1] >= unheard and d.unheard[1] < c.unheard[1])
                or (d.start < c.start and c.unheard[0] >= unheard and d.unheard[0] < c.unheard[0])
            )
            for d in found
        )
    ]
