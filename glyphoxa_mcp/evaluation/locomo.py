"""The LoCoMo benchmark format, read as campaigns of sessions and questions. (pure)

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024) is a JSON list of conversations. Each has `conversation`, holding `session_N` lists
of turns (`speaker`, `dia_id`, `text`, and for a shared photo `blip_caption`) and
`session_N_date_time` strings such as "1:56 pm on 8 May, 2023", and `qa`, whose items have a
`question`, the `evidence` dia_ids that hold the answer and a `category` from 1 to 5.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from glyphoxa_mcp.bounded_input import load_json
from glyphoxa_mcp.domain.models import NewEntry, build, describe_validation_error
from glyphoxa_mcp.domain.vocabulary import slugify
from glyphoxa_mcp.errors import InvalidInputError

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
DATE_EXAMPLE = "1:56 pm on 8 May, 2023"
# Turns are placed this far apart from the session's start, which keeps a session inside one
# scene of the chunker (its break is minutes long).
TURN_GAP = timedelta(seconds=30)

M = TypeVar("M", bound=BaseModel)
_SESSION_KEY = re.compile(r"^session_(\d+)$")
NonBlank = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class Turn(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    speaker: NonBlank
    dia_id: NonBlank
    text: str
    blip_caption: str | None = None

    @property
    def utterance(self) -> str:
        """What was said; a shared photo is described by its caption, as LoCoMo's own
        retrieval baselines read it, since some answers are only in the photo."""
        if not self.blip_caption:
            return self.text
        return f"{self.text} [shares a photo: {self.blip_caption}]".strip()


class Question(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    question: NonBlank
    category: int = Field(ge=1, le=5)
    evidence: tuple[str, ...] = ()

    @field_validator("evidence", mode="before")
    @classmethod
    def _one_id_per_item(cls, value: Any) -> Any:
        # The published file sometimes joins two ids in one item ("D8:6; D9:17").
        if isinstance(value, list):
            return tuple(
                part.strip()
                for item in value
                if isinstance(item, str)
                for part in re.split(r"[;,]", item)
                if part.strip()
            )
        return value


@dataclass(frozen=True)
class Session:
    number: int
    date_time: str
    started_at: datetime
    turns: tuple[Turn, ...]

    @property
    def id(self) -> str:
        return f"session-{self.number}"


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def campaign_id(self) -> str:
        return f"locomo-{slugify(self.sample_id)}"

    @property
    def turn_ids(self) -> frozenset[str]:
        return frozenset(turn.dia_id for session in self.sessions for turn in session.turns)


def parse_locomo(text: str, source: str) -> list[Conversation]:
    """Every conversation of a LoCoMo file, or an error naming the file, the place and the
    problem."""
    data = load_json(text, source)
    if not isinstance(data, list) or not data:
        raise InvalidInputError(
            f"{source}: expected a LoCoMo file, a JSON list of conversations, each with "
            "'conversation' and 'qa'."
        )
    conversations = [_conversation(item, number, source) for number, item in enumerate(data, 1)]
    seen: set[str] = set()
    for conversation in conversations:
        if conversation.campaign_id in seen:
            raise InvalidInputError(f"{source}: two conversations are {conversation.sample_id!r}.")
        seen.add(conversation.campaign_id)
    return conversations


def _conversation(item: Any, number: int, source: str) -> Conversation:
    where = f"{source}: conversation {number}"
    if not isinstance(item, dict):
        raise InvalidInputError(f"{where}: expected an object with 'conversation' and 'qa'.")
    sample_id = str(item.get("sample_id") or f"conversation-{number}")
    where = f"{where} ({sample_id})"
    body, qa = item.get("conversation"), item.get("qa")
    if not isinstance(body, dict) or not isinstance(qa, list):
        raise InvalidInputError(f"{where}: expected 'conversation' (an object) and 'qa' (a list).")
    sessions = []
    for key, turns in body.items():
        match = _SESSION_KEY.match(key)
        if match and turns:
            sessions.append(_session(int(match.group(1)), body, where))
    if not sessions:
        raise InvalidInputError(f"{where}: no sessions (session_1, session_2, ...) with turns.")
    sessions.sort(key=lambda s: s.number)
    turn_ids = [turn.dia_id for session in sessions for turn in session.turns]
    if len(set(turn_ids)) != len(turn_ids):
        repeated = sorted({t for t in turn_ids if turn_ids.count(t) > 1})
        raise InvalidInputError(f"{where}: dia_id {repeated[0]!r} is used by several turns.")
    questions = tuple(
        _validated(Question, raw, f"{where}: qa {index}") for index, raw in enumerate(qa, 1)
    )
    return Conversation(sample_id, tuple(sessions), questions)


def _session(number: int, body: dict[str, Any], where: str) -> Session:
    key = f"session_{number}"
    raw_turns = body[key]
    if not isinstance(raw_turns, list):
        raise InvalidInputError(f"{where}: {key} must be a list of turns.")
    date_time = body.get(f"{key}_date_time")
    try:
        started_at = datetime.strptime(str(date_time), DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise InvalidInputError(
            f"{where}: {key}_date_time {date_time!r} is not a time like {DATE_EXAMPLE!r}."
        ) from None
    turns = tuple(
        _validated(Turn, raw, f"{where}: {key} turn {index}")
        for index, raw in enumerate(raw_turns, 1)
    )
    for index, turn in enumerate(turns, 1):
        if not turn.utterance.strip():
            raise InvalidInputError(f"{where}: {key} turn {index} ({turn.dia_id}) says nothing.")
    return Session(number, str(date_time), started_at, turns)


def _validated(model: type[M], raw: Any, where: str) -> M:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise InvalidInputError(f"{where}: {describe_validation_error(exc)}") from None


def turn_times(start: datetime, count: int) -> list[datetime]:
    """`count` moments in order from `start`, all on the same day as `start`."""
    end_of_day = datetime.combine(start.date() + timedelta(days=1), datetime.min.time(), UTC)
    gap = min(TURN_GAP, (end_of_day - start) / (count + 1)) if count else TURN_GAP
    return [start + gap * index for index in range(count)]


def session_entries(session: Session) -> list[NewEntry]:
    """The session's turns as transcript entries, each keyed by its dia_id so that ingesting
    the same file again adds nothing."""
    return [
        build(
            NewEntry,
            speaker_id=slugify(turn.speaker),
            speaker_name=turn.speaker,
            text=turn.utterance,
            spoken_at=moment,
            source_key=turn.dia_id,
        )
        for turn, moment in zip(
            session.turns, turn_times(session.started_at, len(session.turns)), strict=True
        )
    ]
