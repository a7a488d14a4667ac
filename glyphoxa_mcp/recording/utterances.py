"""What a recorder sends and gets back for each utterance. (pure)"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints

from glyphoxa_mcp.domain.models import Entry, Key, Name, NewEntry, TextCorrection, Utterance, Word

# One call carries a batch a bridge buffered (a reconnect), not a whole session: that is
# `ingest`'s job.
MAX_UTTERANCES_PER_CALL = 500


class SpokenUtterance(BaseModel):
    """One utterance as a speech-to-text bridge heard it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    utterance_id: (
        Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^\S+$")] | None
    ) = Field(
        default=None,
        description="The bridge's id for this utterance: sending it again stores nothing new. "
        "Without one, its time, speaker and words identify it.",
    )
    speaker_id: Annotated[Name, StringConstraints(max_length=128)]
    speaker_name: Name
    text: Annotated[Utterance, StringConstraints(min_length=1)] = Field(
        description="What speech-to-text heard; misheard campaign names are put back."
    )
    timestamp: AwareDatetime = Field(description="When it was said (ISO 8601 with offset).")
    npc_id: Key | None = Field(default=None, description="The NPC who spoke it, if one did.")
    duration_ms: Annotated[int, Field(ge=0, le=86_400_000)] | None = None
    words: Annotated[list[Word], Field(max_length=2000)] | None = Field(
        default=None, description="Speech-to-text words with confidences [0, 1], when known."
    )

    def entry(self, text: str, corrections: tuple[TextCorrection, ...]) -> NewEntry:
        """The utterance to store, with `text` the heard words after `corrections`."""
        return NewEntry(
            speaker_id=self.speaker_id,
            speaker_name=self.speaker_name,
            text=text,
            raw_text=self.text,
            npc_id=self.npc_id,
            spoken_at=self.timestamp,
            duration_ms=self.duration_ms,
            words=tuple(self.words) if self.words is not None else None,
            source_key=f"utterance:{self.utterance_id}" if self.utterance_id else None,
            corrections=corrections,
        )


class StoredUtterance(BaseModel):
    """An utterance stored by this call: what was stored."""

    entry_id: int
    utterance_id: str | None
    new: Literal[True] = Field(default=True, description="True: stored by this call.")
    text: str = Field(description="As stored, names put back.")
    corrections: list[TextCorrection]
    spoken_at: datetime

    @classmethod
    def of(cls, entry: Entry, utterance_id: str | None) -> StoredUtterance:
        return cls(
            entry_id=entry.id,
            utterance_id=utterance_id,
            text=entry.text,
            corrections=list(entry.corrections),
            spoken_at=entry.spoken_at,
        )


class ReplayedUtterance(BaseModel):
    """An utterance stored before (the same utterance_id, or the same time, speaker and
    words): acknowledged by its id and nothing more. A recorder reads nothing, and the line
    stored under that id may be anyone's, the DM's own included."""

    utterance_id: str | None
    new: Literal[False] = Field(default=False, description="False: stored before; nothing changed.")


# What became of one utterance.
RecordedUtterance = StoredUtterance | ReplayedUtterance


def recorded_as(entry: Entry, utterance_id: str | None, new: bool) -> RecordedUtterance:
    """What a recorder is told of an utterance it sent, stored now as `entry` (`new`) or
    found stored before."""
    return (
        StoredUtterance.of(entry, utterance_id)
        if new
        else ReplayedUtterance(utterance_id=utterance_id)
    )
