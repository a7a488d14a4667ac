"""How much one call may ask for, as asked and as granted. (pure)"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
