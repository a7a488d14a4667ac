"""Which section a DM means by `DOC#heading`. (pure)

The heading is a path ("Part > Chapter"), compared without regard to case or spacing, and
may be shortened to its end ("Chapter") when only one section's path ends so. `DOC` alone
(or `DOC#`) is the text before the first heading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.lore.sections import HEADING_SEPARATOR

LISTED_HEADINGS = 8


@dataclass(frozen=True)
class SectionReference:
    document_id: str
    heading: str

    def __str__(self) -> str:
        return f"{self.document_id}#{self.heading}" if self.heading else self.document_id


def parse_reference(text: str, field: str = "DOC#heading") -> SectionReference:
    document, _, heading = text.partition("#")
    if not document.strip():
        raise InvalidInputError(
            f"{field}: {text!r} names no document; write DOC#heading (`lore list` shows them).",
            field=field,
        )
    parts = [" ".join(part.split()) for part in heading.split(">")]
    return SectionReference(document.strip(), HEADING_SEPARATOR.join(p for p in parts if p))


def resolve_heading(reference: SectionReference, headings: Sequence[str]) -> str:
    """The one heading path of `headings` the reference means."""
    wanted = _parts(reference.heading)
    exact = [h for h in headings if _parts(h) == wanted]
    if exact:
        return exact[0]
    ending = [h for h in headings if wanted and _parts(h)[-len(wanted) :] == wanted]
    if len(ending) == 1:
        return ending[0]
    if ending:
        raise InvalidInputError(
            f"{reference}: more than one section ends so: {_listing(ending)}. Write more of "
            "the heading path."
        )
    if not wanted:
        raise NotFoundError(
            f"{reference.document_id} has no text before its first heading; name a section: "
            f"{_listing(headings)}."
        )
    raise NotFoundError(f"{reference}: no such section. Its sections: {_listing(headings)}.")


def _parts(heading: str) -> list[str]:
    """The path's headings, compared without regard to case or spacing."""
    parts = [" ".join(part.split()).casefold() for part in heading.split(">")]
    return [part for part in parts if part]


def _listing(headings: Sequence[str]) -> str:
    shown = [repr(h) if h else "(before the first heading)" for h in headings[:LISTED_HEADINGS]]
    more = len(headings) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
