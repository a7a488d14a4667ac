"""Reading transcripts: JSON Lines (one utterance per line) or `Speaker: text` lines. (pure)

{"speaker_id": "p1", "speaker_name": "Kael", "text": "...", "timestamp": "2026-03-01T19:02:11Z",
 "npc_id": null, "duration_ms": 2100}

A scene starts where a transcript says so, and the lines after it belong to it until the
next: in JSON Lines an object `{"scene": {"location": "...", "present": ["...", ...],
"title": "..."}}`, in a plain transcript a line `[scene] location: ...; present: ..., ...;
title: ...`. Every part is optional; names, aliases or ids, resolved when stored.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, ValidationError

from glyphoxa_mcp.bounded_input import load_json_line
from glyphoxa_mcp.domain.models import NewEntry, Word, describe_validation_error
from glyphoxa_mcp.domain.scenes import SceneMarker
from glyphoxa_mcp.domain.vocabulary import slugify
from glyphoxa_mcp.domain.wording import rule_of
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


# Scenes and lines out of time, reported one by one up to this many.
PROBLEMS_SHOWN = 5


@dataclass
class Transcript:
    """A transcript's utterances, where each was written (`sources`: file:line), and the
    scenes it starts: each with the index in `entries` of its first line."""

    entries: list[NewEntry] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    scenes: list[tuple[int, SceneMarker]] = field(default_factory=list)

    def add(self, entry: NewEntry, source: str) -> None:
        self.entries.append(entry)
        self.sources.append(source)

    def open_scene(self, marker: SceneMarker) -> None:
        if self.scenes and self.scenes[-1][0] == len(self.entries):
            raise InvalidInputError(
                f"{marker.source}: a scene starts here, but the scene started at "
                f"{self.scenes[-1][1].source} has no lines; give it at least one line or take "
                "it out."
            )
        self.scenes.append((len(self.entries), marker))

    def close(self) -> Transcript:
        if self.scenes and self.scenes[-1][0] == len(self.entries):
            raise InvalidInputError(
                f"{self.scenes[-1][1].source}: the scene started here has no lines after it."
            )
        self._check_times()
        return self

    def _check_times(self) -> None:
        """A line belongs to the scene its time falls in (sql/032), so each line's time
        must fall in the scene it is written in: from that scene's first line to the next
        scene's, each scene starting after the one before."""
        if not self.scenes:
            return
        opened = [(index, marker, self.entries[index].spoken_at) for index, marker in self.scenes]
        problems = [
            f"{self.sources[index]}: the first line of the scene started at {marker.source} is "
            f"stamped {start.isoformat()}, not after the scene before it begins "
            f"({before.isoformat()}); correct its time or move the scene's marker."
            for (_, _, before), (index, marker, start) in itertools.pairwise(opened)
            if start <= before
        ]
        if not problems:
            openings = [index for index, _, _ in opened]
            starts = [start for _, _, start in opened]
            for number, entry in enumerate(self.entries):
                written = bisect.bisect_right(openings, number) - 1
                if written != bisect.bisect_right(starts, entry.spoken_at) - 1:
                    scene = (
                        f"the scene it is written in (started at {self.scenes[written][1].source})"
                        if written >= 0
                        else "the time before the first scene"
                    )
                    problems.append(
                        f"{self.sources[number]}: stamped {entry.spoken_at.isoformat()}, outside "
                        f"{scene}; a line belongs to the scene its time falls in: correct its "
                        "time or move it."
                    )
        if problems:
            more = len(problems) - PROBLEMS_SHOWN
            shown = problems[:PROBLEMS_SHOWN] + ([f"... and {more} more."] if more > 0 else [])
            raise InvalidInputError("\n".join(shown))


def _marker(data: object, source: str) -> SceneMarker:
    if not isinstance(data, dict):
        raise InvalidInputError(
            f"{source}: scene: must be an object with location, present and title, each optional."
        )
    if "source" in data:
        raise InvalidInputError(f"{source}: scene.source: not a part of a scene.")
    try:
        return SceneMarker.model_validate({**data, "source": source})
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        rule = (
            "must be a list of names"
            if error["loc"] == ("present",) and error["type"] == "tuple_type"
            else rule_of(error)
        )
        raise InvalidInputError(f"{source}: scene.{where}: {rule}.") from None


def read_jsonl(lines: Iterable[str], source: str = "transcript") -> Transcript:
    """Every utterance and scene, or an error naming the file, line and problem; blank lines
    are skipped."""
    transcript = Transcript()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        data = load_json_line(raw, f"{source}:{number}")
        if isinstance(data, dict) and "scene" in data:
            if len(data) > 1:
                others = ", ".join(sorted(k for k in data if k != "scene"))
                raise InvalidInputError(
                    f"{source}:{number}: a scene object holds only 'scene'; got also {others}."
                )
            transcript.open_scene(_marker(data["scene"], f"{source}:{number}"))
            continue
        try:
            line = TranscriptLine.model_validate(data)
            transcript.add(
                NewEntry(
                    speaker_id=line.speaker_id,
                    speaker_name=line.speaker_name,
                    text=line.text,
                    npc_id=line.npc_id,
                    spoken_at=line.timestamp,
                    duration_ms=line.duration_ms,
                    words=tuple(line.words) if line.words is not None else None,
                ),
                f"{source}:{number}",
            )
        except ValidationError as exc:
            raise InvalidInputError(
                f"{source}:{number}: {describe_validation_error(exc)}"
            ) from None
    return transcript.close()


_SPEAKER_LINE = re.compile(r"^\s*([^:]{1,80}?)\s*:\s*(\S.*)$")


def split_speaker_line(raw: str) -> tuple[str, str] | None:
    """The speaker and the words of a `Speaker: text` line, or None for another shape."""
    match = _SPEAKER_LINE.match(raw)
    return (match.group(1), match.group(2).strip()) if match else None


_SCENE_LINE = re.compile(r"^\s*\[scene\]\s*(.*)$", re.IGNORECASE)
_SCENE_PART = re.compile(r"^\s*(location|present|title)\s*:\s*(.*?)\s*$", re.IGNORECASE)


def scene_line(raw: str, source: str) -> SceneMarker | None:
    """The scene a plain transcript's `[scene] location: ...; present: A, B; title: ...` line
    starts, or None for another line."""
    match = _SCENE_LINE.match(raw)
    if match is None:
        return None
    given: dict[str, object] = {}
    for part in filter(str.strip, match.group(1).split(";")):
        found = _SCENE_PART.match(part)
        if found is None:
            raise InvalidInputError(
                f"{source}: expected '[scene] location: ...; present: ..., ...; title: ...' "
                f"(each part optional), got {part.strip()!r}."
            )
        key, value = found.group(1).lower(), found.group(2)
        if key in given:
            raise InvalidInputError(f"{source}: scene.{key}: given twice.")
        given[key] = (
            [n.strip() for n in value.split(",") if n.strip()] if key == "present" else value
        )
    return _marker(given, source)


def read_plain(
    lines: Iterable[str], start: datetime, source: str = "transcript", step_seconds: float = 5.0
) -> Transcript:
    """`Speaker: text` lines and `[scene]` lines. With no timestamps in the file, utterances
    are placed `step_seconds` apart from `start`, in order; each line's number keeps it
    unique on re-import."""
    transcript = Transcript()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        marker = scene_line(raw, f"{source}:{number}")
        if marker is not None:
            transcript.open_scene(marker)
            continue
        parts = split_speaker_line(raw)
        if parts is None:
            raise InvalidInputError(
                f"{source}:{number}: expected 'Speaker: text', got {raw.strip()!r}."
            )
        speaker, text = parts
        try:
            transcript.add(
                NewEntry(
                    speaker_id=slugify(speaker),
                    speaker_name=speaker,
                    text=text,
                    spoken_at=start + timedelta(seconds=step_seconds * (number - 1)),
                    source_key=f"line-{number}-{hashlib.sha256(raw.encode()).hexdigest()[:16]}",
                ),
                f"{source}:{number}",
            )
        except ValidationError as exc:
            raise InvalidInputError(
                f"{source}:{number}: {describe_validation_error(exc)}"
            ) from None
    return transcript.close()


def looks_like_jsonl(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return first.lstrip().startswith("{")


def parse_transcript(text: str, source: str, start: datetime) -> Transcript:
    """A transcript file's utterances and scenes, JSON Lines or `Speaker: text` (placed from
    `start`); a file with no utterance (empty, or only blank lines) is an error, so it makes
    no session."""
    lines = text.splitlines()
    if looks_like_jsonl(text):
        transcript = read_jsonl(lines, source)
    else:
        transcript = read_plain(lines, start, source)
    if not transcript.entries:
        raise InvalidInputError(
            f"{source}: the transcript has no lines (the file is empty or blank); "
            "nothing was stored."
        )
    return transcript
