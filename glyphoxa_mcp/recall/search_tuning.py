"""The numbers that shape how past sessions are ranked, in one model, so an evaluation can
choose them on some conversations and score them on others. (pure)"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SessionSearchTuning(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    meaning_weight: float = Field(
        0.5, ge=0, description="Weight of the ranking by meaning; the ranking by words has 1."
    )
    fusion_k: int = Field(
        20, ge=1, description="Reciprocal rank fusion's constant: smaller trusts top ranks more."
    )
    speaker_weight: float = Field(
        1.0,
        ge=0,
        description="Weight of the ranking of candidates spoken by a speaker the query names.",
    )
    event_weight: float = Field(
        1.0,
        ge=0,
        description="For a question that asks when: weight of the ranking of candidates "
        "whose lines tell when something happened.",
    )


SHIPPED_TUNING = SessionSearchTuning()


def one_step_away(tuning: SessionSearchTuning) -> dict[str, SessionSearchTuning]:
    """Each number of `tuning` moved one step down and up (halved and doubled; a weight
    that is off is tried on at 1), the others kept: the settings a leave-one-out check of
    the shipped choice compares it with."""
    alternatives = {}
    for field, value in tuning.model_dump().items():
        steps = (1.0,) if value == 0 else (value / 2, value * 2)
        for step in steps:
            moved = max(1, round(step)) if isinstance(value, int) else step
            if moved != value:
                alternatives[f"{field} {moved:g}"] = tuning.model_copy(update={field: moved})
    return alternatives
