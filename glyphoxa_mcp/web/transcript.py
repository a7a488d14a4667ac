"""A transcript line as the DM reads it: the names that correction put back, marked with
what speech-to-text heard. (pure)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_mcp.domain.models import TextCorrection


@dataclass(frozen=True)
class Segment:
    text: str
    heard: str | None = None
    """For a name correction put back: what was heard in its place."""


def segments(raw: str, text: str, corrections: Sequence[TextCorrection]) -> list[Segment]:
    """`text` cut into what was said as heard and the corrected names. The corrections are
    spans of `raw`; when they do not make `text` (it was changed since), the line is one
    plain segment rather than a wrong mark."""
    if not corrections:
        return [Segment(text)]
    cut: list[Segment] = []
    position = 0
    for correction in sorted(corrections, key=lambda c: c.start):
        if correction.start < position or correction.end > len(raw):
            return [Segment(text)]
        if correction.start > position:
            cut.append(Segment(raw[position : correction.start]))
        cut.append(Segment(correction.entity, correction.heard))
        position = correction.end
    if position < len(raw):
        cut.append(Segment(raw[position:]))
    if "".join(s.text for s in cut) != text:
        return [Segment(text)]
    return cut
