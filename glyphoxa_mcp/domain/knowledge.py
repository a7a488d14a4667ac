"""Who knows what (issue 30): a campaign's knowledge setting and how word travels. (pure)

In a `witnessed` campaign an NPC reads verbatim only the lines of the scenes it was present
in and its own (the rule itself is written once, in the database: `glyphoxa_may_read`,
sql/032). What a scene taught reaches an NPC that was not there only as hearsay: when it is
within `news_hops` relationships that carry news of someone who was present.
"""

from __future__ import annotations

from enum import StrEnum

from glyphoxa_mcp.domain.vocabulary import checked_relationship_type
from glyphoxa_mcp.errors import InvalidInputError


class Knowledge(StrEnum):
    SHARED = "shared"
    """Every NPC reads every line the DM did not keep to themselves (campaigns made before
    scenes keep it)."""
    WITNESSED = "witnessed"
    """An NPC reads the lines of the scenes it was present in, and its own."""


# Relationships along which news of a scene travels, in both directions: people who know
# each other, members of one group, employer and employed, parent and child, allies.
NEWS_TYPES = ("KNOWS", "MEMBER_OF", "EMPLOYED_BY", "CHILD_OF", "ALLIED_WITH")
MAX_NEWS_HOPS = 3
DEFAULT_NEWS_HOPS = 1


def checked_knowledge(value: str, field: str = "knowledge") -> Knowledge:
    try:
        return Knowledge(value.strip().lower())
    except ValueError:
        raise InvalidInputError(
            f"{field} {value!r} is not a knowledge setting: use 'witnessed' (an NPC knows the "
            "scenes it was in) or 'shared' (every NPC reads every line).",
            field=field,
        ) from None


def checked_news_hops(hops: int, field: str = "news_hops") -> int:
    if not 0 <= hops <= MAX_NEWS_HOPS:
        raise InvalidInputError(
            f"{field} must be from 0 (word never travels) to {MAX_NEWS_HOPS}, not {hops}.",
            field=field,
        )
    return hops


def checked_news_types(types: list[str], field: str = "news_types") -> tuple[str, ...]:
    """The DM's own relationship types that carry news, normalised, without the built-in
    ones (which always do) and without repeats."""
    found: list[str] = []
    for rel_type in types:
        normalised = checked_relationship_type(rel_type, field)
        if normalised not in NEWS_TYPES and normalised not in found:
            found.append(normalised)
    return tuple(found)
