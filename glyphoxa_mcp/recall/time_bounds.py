"""`after` / `before` as a model writes them: a real date or time, or a day of the story. (pure)"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from glyphoxa_mcp.errors import InvalidInputError

_STORY_DAY = re.compile(r"^\s*(?:story\s+)?day\s+(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
FORMS = (
    "an ISO date or time such as 2026-03-14 or 2026-03-14T19:30, or a story day such as 'day 12'"
)
# Far wider than any campaign, and far inside what the database stores (whatever the offset).
EARLIEST = date(1900, 1, 1)
LATEST = date(2200, 12, 31)
LAST_STORY_DAY = 1_000_000
ECHOED = 40


@dataclass(frozen=True)
class TimeBound:
    """Exactly one of the two is set."""

    real: datetime | None = None
    story_day: float | None = None


def parse_time_bound(value: str | None, field: str) -> TimeBound | None:
    if value is None or not value.strip():
        return None
    day = _STORY_DAY.match(value)
    if day:
        story_day = float(day.group(1))
        if story_day > LAST_STORY_DAY:
            raise InvalidInputError(
                f"{field} must be a story day from 0 to {LAST_STORY_DAY}.", field=field
            )
        return TimeBound(story_day=story_day)
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(text), time())
        except ValueError:
            shown = repr(value[:ECHOED]) + ("…" if len(value) > ECHOED else "")
            raise InvalidInputError(f"{field} {shown} is not {FORMS}.", field=field) from None
    if not EARLIEST <= parsed.date() <= LATEST:
        raise InvalidInputError(
            f"{field} must be an ISO date between {EARLIEST} and {LATEST}.", field=field
        )
    return TimeBound(real=parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))
