"""Questions that ask when, and the lines that tell when something happened. (pure)

"When did Mara go camping?" repeats its words in every line about camping plans, but the
answer is in the line that tells the trip as it happened: "we went camping last weekend".
Such lines place the event in time relative to when they were said (the session's date then
gives the answer), so they carry a time expression.
"""

from __future__ import annotations

import re

_ASKS_WHEN = re.compile(
    r"^\s*when\b|\bwhat (?:year|month|day|date|time|week|weekend)\b|\bhow long ago\b"
    r"|\bhow long has\b|\bsince when\b",
    re.IGNORECASE,
)
_WEEKDAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTHS = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november"
    r"|december)"
)
_UNITS = r"(?:day|night|week|weekend|month|year|summer|winter|spring|fall|autumn)s?"
_TELLS_WHEN = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|recently|lately|ago|earlier|"
    rf"(?:last|next|this|past|previous|coming)\s+(?:few\s+|couple\s+of\s+)?(?:{_UNITS}|{_WEEKDAYS}"
    rf"|morning|evening|afternoon|time)|{_WEEKDAYS}|{_MONTHS}|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def asks_when(query: str) -> bool:
    return _ASKS_WHEN.search(query) is not None


def tells_when(text: str) -> bool:
    return _TELLS_WHEN.search(text) is not None
