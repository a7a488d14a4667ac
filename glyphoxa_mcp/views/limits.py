"""How much one call may ask for, as asked and as granted, and the bounds of every argument a
caller passes to a read. (pure)"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

# Text arguments, in characters.
MAX_QUERY = 1000
MAX_NAME = 200  # an entity's name or alias, a speaker
MAX_ID = 128  # an entity's or a session's id (the database's key rule)
MAX_RELATION = 64
MAX_TIME = 64  # an ISO date or time, or 'day N'
MAX_UTTERANCE = 1000

# Counts. A count beyond the tier's own limit is clamped to it (and the result says so);
# beyond these it is refused: they keep every number a caller sends far inside what the
# database takes.
MAX_COUNT = 1000
MAX_DEPTH = 10
MAX_SESSIONS_AGO = 10_000


class Clamped(BaseModel):
    """A count as asked and as used, so a result can say when it was clamped."""

    model_config = ConfigDict(frozen=True)

    requested: int
    used: int

    @property
    def was_clamped(self) -> bool:
        return self.requested != self.used


def clamp(requested: int, upper: int, lower: int = 1) -> Clamped:
    return Clamped(requested=requested, used=min(max(requested, lower), upper))
