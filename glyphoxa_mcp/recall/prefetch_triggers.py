"""Does a half-spoken utterance reach into the past? (pure)

Temporal references ("do you remember", "last time", "you promised") mean an NPC is about
to need what happened before, so the orchestrator should fetch it while the player is
still talking.
"""

from __future__ import annotations

import re

_CUES = (
    r"do you remember",
    r"(?:you )?remember (?:when|that|the|how|what)",
    r"last (?:time|session|night|week|month|year)",
    r"the other (?:day|night)",
    r"previously",
    r"earlier",
    r"back (?:when|then)",
    r"(?:a (?:few|couple of) )?(?:days?|weeks?|months?|years?) ago",
    r"you (?:said|told|promised|swore|mentioned|asked)",
    r"we (?:met|talked|spoke|agreed)",
    r"as (?:i|we) said",
    r"(?:like|as) before",
)
_PATTERN = re.compile(r"\b(?:" + "|".join(_CUES) + r")\b", re.IGNORECASE)


def temporal_reference(utterance: str) -> str | None:
    """The first phrase that points back in time, as said; None when there is none."""
    match = _PATTERN.search(utterance)
    return match.group(0) if match else None
