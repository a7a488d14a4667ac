"""The knowledge graph's built-in vocabulary and id rules (pure; no I/O)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from enum import StrEnum

from glyphoxa_mcp.errors import InvalidInputError


class EntityType(StrEnum):
    NPC = "npc"
    PLAYER = "player"
    LOCATION = "location"
    ITEM = "item"
    FACTION = "faction"
    EVENT = "event"
    QUEST = "quest"
    CONCEPT = "concept"


# Built-in relationship types; True marks the ones that hold both ways and are stored both ways.
# Custom UPPER_SNAKE types are allowed too and are directional.
RELATIONSHIP_TYPES: dict[str, bool] = {
    "KNOWS": False,
    "LOCATED_AT": False,
    "OWNS": False,
    "MEMBER_OF": False,
    "ALLIED_WITH": True,
    "HOSTILE_TO": True,
    "PARTICIPATED_IN": False,
    "QUEST_GIVER": False,
    "CHILD_OF": False,
    "EMPLOYED_BY": False,
    # Named in a session's lines, without taking part in it (an episode's link to what was
    # talked about): never part of an NPC's identity.
    "MENTIONED_IN": False,
}

BIDIRECTIONAL_TYPES = tuple(t for t, both in RELATIONSHIP_TYPES.items() if both)

KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
RELATIONSHIP_TYPE_PATTERN = r"^[A-Z][A-Z0-9_]{0,63}$"
_NON_SLUG = re.compile(r"[^a-z0-9]+")


def is_bidirectional(rel_type: str) -> bool:
    return RELATIONSHIP_TYPES.get(rel_type, False)


def normalise_relationship_type(rel_type: str) -> str:
    """'allied with' and 'allied-with' both mean ALLIED_WITH."""
    return re.sub(r"[\s-]+", "_", rel_type.strip()).upper()


def checked_relationship_type(rel_type: str, field: str = "rel_type") -> str:
    """The normalised type, or an error listing the built-in types."""
    normalised = normalise_relationship_type(rel_type)
    if not re.match(RELATIONSHIP_TYPE_PATTERN, normalised):
        raise InvalidInputError(
            f"{field} {rel_type!r} is not a relationship type: use UPPER_SNAKE words, such as "
            f"{', '.join(RELATIONSHIP_TYPES)}.",
            field=field,
        )
    return normalised


def slugify(name: str) -> str:
    """A readable id for a name: 'Captain Oriel Vask' -> 'captain-oriel-vask'.

    Names with no ASCII letters or digits get a short stable hash instead.
    """
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    slug = _NON_SLUG.sub("-", ascii_name.replace("'", "")).strip("-")[:100].rstrip("-")
    if slug:
        return slug
    return "entity-" + hashlib.sha256(name.encode()).hexdigest()[:10]
