"""Reading transcript JSON Lines: one utterance per line. (pure)

{"speaker_id": "p1", "speaker_name": "Kael", "text": "...", "timestamp": "2026-03-01T19:02:11Z",
 "npc_id": null, "duration_ms": 2100}
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, ValidationError

from glyphoxa_mcp.bounded_input import load_json_line
from glyphoxa_mcp.domain.models import NewEntry, Word, describe_validation_error
from glyphoxa_mcp.domain.vocabulary import slugify
from glyphoxa_mcp.errors import InvalidInputError


class TranscriptLine(BaseModel):
    model_config = ConfigDict(extra="ignore")

    speaker_id: str
    speaker_name: str
    text: str
    timestamp: datetime
    npc_id: str | None = None
    duration_ms: int | None = None
    words: list[Word] | None = None


def parse_jsonl(lines: Iterable[str], source: str = "transcript") -> list[NewEntry]:
    """Every utterance, or an error naming the file, line and problem; blank lines are skipped."""
    entries = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        data = load_json_line(raw, f"{source}:{number}")
        try:
            line = TranscriptLine.model_validate(data)
            entries.append(
                NewEntry(
                    speaker_id=line.speaker_id,
                    speaker_name=line.speaker_name,
                    text=line.text,
                    npc_id=line.npc_id,
                    spoken_at=line.timestamp,
                    duration_ms=line.duration_ms,
                    words=tuple(line.words) if line.words is not None else None,
                )
            )
        except ValidationError as exc:
            raise InvalidInputError(
                f"{source}:{number}: {describe_validation_error(exc)}"
            ) from None
    return entries


_SPEAKER_LINE = re.compile(r"^\s*([^:]{1,80}?)\s*:\s*(\S.*)$")


def split_speaker_line(raw: str) -> tuple[str, str] | None:
    """The speaker and the words of a `Speaker: text` line, or None for another shape."""
    match = _SPEAKER_LINE.match(raw)
    return (match.group(1), match.group(2).strip()) if match else None


def parse_plain(
    lines: Iterable[str], start: datetime, source: str = "transcript", step_seconds: float = 5.0
) -> list[NewEntry]:
    """`Speaker: text` lines. With no timestamps in the file, utterances are placed
    `step_seconds` apart from `start`, in order; each line's number keeps it unique on
    re-import."""
    entries = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        parts = split_speaker_line(raw)
        if parts is None:
            raise InvalidInputError(
                f"{source}:{number}: expected 'Speaker: text', got {raw.strip()!r}."
            )
        speaker, text = parts
        try:
            entries.append(
                NewEntry(
                    speaker_id=slugify(speaker),
                    speaker_name=speaker,
                    text=text,
                    spoken_at=start + timedelta(seconds=step_seconds * (number - 1)),
                    source_key=f"line-{number}-{hashlib.sha256(raw.encode()).hexdigest()[:16]}",
                )
            )
        except ValidationError as exc:
            raise InvalidInputError(
                f"{source}:{number}: {describe_validation_error(exc)}"
            ) from None
    return entries


def looks_like_jsonl(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return first.lstrip().startswith("{")


def parse_transcript(text: str, source: str, start: datetime) -> list[NewEntry]:
    """A transcript file's utterances, JSON Lines or `Speaker: text` (placed from `start`);
    a file with none (empty, or only blank lines) is an error, so it makes no session."""
    lines = text.splitlines()
    if looks_like_jsonl(text):
        entries = parse_jsonl(lines, source)
    else:
        entries = parse_plain(lines, start, source)
    if not entries:
        raise InvalidInputError(
            f"{source}: the transcript has no lines (the file is empty or blank); "
            "nothing was stored."
        )
    return entries
