"""How messages word what they count and the rules pydantic reports. (pure)

Every message that says how many of something there are goes through `counted`, so that
one is never "1 lines"; every rule a user reads from a pydantic error goes through `rule_of`,
so that it never starts with pydantic's "Value error, ".
"""

from __future__ import annotations

from pydantic_core import ErrorDetails

# What pydantic puts before the message of a ValueError a validator raised.
PYDANTIC_PREFIX = "Value error, "
VOWELS = frozenset("aeiou")


def plural_of(noun: str) -> str:
    """The plural of an English noun (of its last word: "misheard name" -> "misheard names");
    regular ones only: pass the plural to `counted` for any other."""
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in VOWELS:
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """The count and its noun, singular for one: "1 line", "0 lines", "2 entities"."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {plural or plural_of(noun)}"


def rule_of(error: ErrorDetails) -> str:
    """The message of one pydantic error (an item of `ValidationError.errors()`), without
    the prefix pydantic adds to a validator's own message."""
    return error["msg"].removeprefix(PYDANTIC_PREFIX)


def comma_separated(text: str | None) -> list[str]:
    """The names a DM types in one field, "Brannoch, Old Berrit": each trimmed, blanks left
    out (an empty field names nobody)."""
    return [part.strip() for part in (text or "").split(",") if part.strip()]
