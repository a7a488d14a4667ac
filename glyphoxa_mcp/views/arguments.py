"""Normalising what a caller passes, the same way for every read. (pure)"""

from __future__ import annotations

import re

from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.errors import InvalidInputError

# How much of a caller's value an error message repeats.
ECHOED = 40
_KEY = re.compile(KEY_PATTERN)
ID_RULE = "an id: up to 128 letters, digits and _ . : -, starting with a letter or digit"


def quoted(text: str, limit: int = ECHOED) -> str:
    """`text` as an error message repeats it: quoted, and cut short when it is long, so an
    answer never carries a caller's megabyte back."""
    if len(text) <= limit:
        return repr(text)
    shown = repr(text[:limit])
    return f"{shown[:-1]}…{shown[-1]}"


def present(text: str | None, field: str) -> str | None:
    """`text` stripped, or None when it is absent or blank; NUL characters are refused."""
    if text is None:
        return None
    if "\x00" in text:
        raise InvalidInputError(f"{field} must not contain NUL characters.", field=field)
    return text.strip() or None


def an_id(text: str | None, field: str) -> str | None:
    """Like `present`, for an argument that names something by its id, not its name."""
    value = present(text, field)
    if value is not None and not _KEY.match(value):
        raise InvalidInputError(f"{field} must be {ID_RULE}, such as 'old-berrit'.", field=field)
    return value


def search_query(query: str) -> str | None:
    """The query to run, or None when it is blank (the read answers with a note)."""
    return present(query, "query")
