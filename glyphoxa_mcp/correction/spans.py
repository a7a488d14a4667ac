"""Corrections as spans of what speech-to-text heard, and the text they make. (pure)"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from glyphoxa_mcp.correction.phonetic import CorrectedText
from glyphoxa_mcp.domain.models import TextCorrection


def apply_corrections(raw: str, corrections: Iterable[TextCorrection]) -> str:
    """raw with every span replaced by its name (spans never overlap)."""
    text = raw
    for c in sorted(corrections, key=lambda c: -c.start):
        text = text[: c.start] + c.entity + text[c.end :]
    return text


def phonetic_spans(result: CorrectedText) -> tuple[TextCorrection, ...]:
    return tuple(
        TextCorrection(
            start=c.start,
            end=c.end,
            heard=c.heard,
            entity=c.entity,
            entity_id=c.entity_id,
            stage="phonetic",
        )
        for c in result.corrections
    )


def combined(
    phonetic: Sequence[TextCorrection], others: Iterable[TextCorrection]
) -> tuple[TextCorrection, ...]:
    """The phonetic stage's spans, plus the other stages' spans that do not overlap them."""
    kept = [
        c
        for c in others
        if c.stage != "phonetic" and not any(c.start < p.end and p.start < c.end for p in phonetic)
    ]
    return tuple(sorted([*phonetic, *kept], key=lambda c: c.start))


def raw_offset(corrections: Sequence[TextCorrection], offset: int) -> int:
    """Where a position in the corrected text lies in the raw text (outside the spans)."""
    shift = 0
    for c in sorted(corrections, key=lambda c: c.start):
        corrected_start = c.start + shift
        if offset < corrected_start:
            break
        shift += len(c.entity) - (c.end - c.start)
    return offset - shift


def corrected_offset(corrections: Sequence[TextCorrection], offset: int) -> int:
    """Where a raw position outside the spans lies in the corrected text."""
    shift = 0
    for c in sorted(corrections, key=lambda c: c.start):
        if c.start >= offset:
            break
        shift += len(c.entity) - (c.end - c.start)
    return offset + shift
