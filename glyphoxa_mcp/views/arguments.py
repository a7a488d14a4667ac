"""Normalising what a caller passes, the same way for every read. (pure)"""

from __future__ import annotations

from glyphoxa_mcp.errors import InvalidInputError


def present(text: str | None, field: str) -> str | None:
    """`text` stripped, or None when it is absent or blank; NUL characters are refused."""
    if text is None:
        return None
    if "\x00" in text:
        raise InvalidInputError(f"{field} must not contain NUL characters.", field=field)
    return text.strip() or None


def search_query(query: str) -> str | None:
    """The query to run, or None when it is blank (the read answers with a note)."""
    return present(query, "query")
