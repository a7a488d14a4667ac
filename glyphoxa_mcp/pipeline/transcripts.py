"""Reading transcript JSON Lines: one utterance per line. (pure)

{"speaker_id": "p1", "speaker_name": "Kael", "text": "...", "timestamp": "2026-03-01T19:02:11Z",
 "npc_id": null, "duration_ms": 2100}
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, ValidationError

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.storage.models import NewEntry, describe_validation_error


class TranscriptLine(BaseModel):
    model_config = ConfigDict(extra="ignore")

    speaker_id: str
    speaker_name: str
    text: str
    timestamp: datetime
    npc_id: str | None = None
    duration_ms: int | None = None


def parse_jsonl(lines: Iterable[str], source: str = "transcript") -> list[NewEntry]:
    """Every utterance, or an error naming the file, line and problem; blank lines are skipped."""
    entries = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f"{source}:{number}:{exc.colno}: not valid JSON ({exc.msg})."
            ) from None
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
                )
            )
        except ValidationError as exc:
            raise InvalidInputError(
                f"{source}:{number}: {describe_validation_error(exc)}"
            ) from None
    return entries
