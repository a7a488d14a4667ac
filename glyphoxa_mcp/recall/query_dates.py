"""The calendar date a search query names, as the time at the table it points to. (pure)

"What did Maria plan on 7 July, 2023?" is about what was said that day. A named day covers
that day and the next (what happened is often told the day after: "last night"); a month
and year cover the month. Bare years and relative dates ("last week") are left alone: a
bare number is too often not a year, and a relative date needs a "now" a query lacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
# A day's talk about it runs into the next day.
DAY_SPAN = timedelta(days=2)

_MONTH = r"(?P<month>" + "|".join(m for m in MONTHS) + "|" + "|".join(m[:3] for m in MONTHS) + ")"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_PATTERNS = (
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\.?,?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\.?\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(r"\b(?P<year>\d{4})-(?P<month_number>\d{2})-(?P<day>\d{2})\b"),
    re.compile(rf"\b{_MONTH}\.?,?\s+{_YEAR}\b", re.IGNORECASE),
)


@dataclass(frozen=True)
class NamedPeriod:
    start: datetime
    end: datetime  # exclusive


def named_period(query: str) -> NamedPeriod | None:
    """The period of the first real calendar date in `query`, or None."""
    for pattern in _PATTERNS:
        for match in pattern.finditer(query):
            period = _period(match)
            if period is not None:
                return period
    return None


def _period(match: re.Match[str]) -> NamedPeriod | None:
    fields = match.groupdict()
    year = int(fields["year"])
    if fields.get("month_number"):
        month = int(fields["month_number"])
    else:
        month = next(i for i, m in enumerate(MONTHS, 1) if m.startswith(fields["month"].lower()))
    try:
        if fields.get("day") is None:
            start = datetime(year, month, 1, tzinfo=UTC)
            end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
            return NamedPeriod(start, end)
        start = datetime(year, month, int(fields["day"]), tzinfo=UTC)
    except ValueError:  # 31 February, month 13
        return None
    return NamedPeriod(start, start + DAY_SPAN)
