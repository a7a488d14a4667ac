"""One line of a live transcript stream (`glyphoxa-mcp record`): a JSON utterance as a
bridge logs it, or `Speaker: text` typed or tailed at a terminal. (pure)"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ValidationError

from glyphoxa_mcp.bounded_input import load_json_line
from glyphoxa_mcp.domain.models import describe_validation_error
from glyphoxa_mcp.domain.vocabulary import slugify
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.transcripts import split_speaker_line
from glyphoxa_mcp.recording.utterances import SpokenUtterance

# A line longer than this is not an utterance (a runaway log line, a binary file).
MAX_LINE_CHARS = 64_000


def parse_line(raw: str, where: str, now: datetime) -> SpokenUtterance | None:
    """The utterance on one line (None for a blank one), or an error naming `where`
    (source:line) and, for JSON, the column. A line without a time was said `now`."""
    text = raw.strip()
    if not text:
        return None
    if len(raw) > MAX_LINE_CHARS:
        raise InvalidInputError(f"{where}: the line is longer than {MAX_LINE_CHARS} characters.")
    if text.startswith("{"):
        return _json_line(text, where, now)
    parts = split_speaker_line(text)
    if parts is None:
        raise InvalidInputError(
            f"{where}: expected a JSON utterance or 'Speaker: text', got {text[:80]!r}."
        )
    speaker, words = parts
    return _utterance(
        {"speaker_id": slugify(speaker), "speaker_name": speaker, "text": words},
        where,
        now,
    )


def _json_line(text: str, where: str, now: datetime) -> SpokenUtterance:
    data = load_json_line(text, where)
    if not isinstance(data, dict):
        raise InvalidInputError(f"{where}: expected a JSON object with speaker_name and text.")
    return _utterance(data, where, now)


def _utterance(data: dict[str, Any], where: str, now: datetime) -> SpokenUtterance:
    try:
        return SpokenUtterance.model_validate({"timestamp": now, **data})
    except ValidationError as exc:
        raise InvalidInputError(f"{where}: {describe_validation_error(exc)}") from None
