"""A lore file as a document: its id, title, kind, checksum and sections. (pure)"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from glyphoxa_mcp.bounded_input import check_length
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.lore.foundry_journal import foundry_journal
from glyphoxa_mcp.lore.markdown import markdown_blocks, text_blocks
from glyphoxa_mcp.lore.sections import LoreSection, sections_of

SourceKind = Literal["markdown", "text", "foundry"]
KINDS: dict[str, SourceKind] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".json": "foundry",
}
# A long campaign book is a few hundred thousand characters; each piece is embedded.
MAX_LORE_FILE_CHARS = 2_000_000
MAX_TITLE_CHARS = 200
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class ParsedDocument:
    id: str
    title: str
    source_kind: SourceKind
    source_name: str
    checksum: str
    sections: tuple[LoreSection, ...]


def kind_of(name: str) -> SourceKind | None:
    """The kind of lore file a name says it is, by its suffix; None for any other file."""
    return KINDS.get(PurePath(name).suffix.lower())


def document_id(relative: PurePath) -> str:
    """A document's id from its path (within the folder added): 'Chapters/The Temple.md'
    -> 'chapters-the-temple'."""
    words = "-".join([*relative.parent.parts, relative.stem])
    ascii_words = unicodedata.normalize("NFKD", words).encode("ascii", "ignore").decode()
    slug = _NOT_SLUG.sub("-", ascii_words.lower().replace("'", "")).strip("-")[:100].rstrip("-")
    return slug or "lore-" + hashlib.sha256(words.encode()).hexdigest()[:10]


def check_distinct_ids(documents: Sequence[ParsedDocument]) -> None:
    """Two files of one addition may not make the same document."""
    seen: dict[str, ParsedDocument] = {}
    for document in documents:
        first = seen.setdefault(document.id, document)
        if first is not document:
            raise InvalidInputError(
                f"{first.source_name} and {document.source_name} would both be lore document "
                f"{document.id!r}; rename one, or add them one at a time with --id."
            )


def checked_id(value: str, field: str = "--id") -> str:
    if not re.match(KEY_PATTERN, value):
        raise InvalidInputError(
            f"{field} {value!r}: a document id is 1-128 letters, digits and - _ . : "
            "starting with a letter or digit.",
            field=field,
        )
    return value


def parse_document(
    text: str, source: str, relative: PurePath, doc_id: str | None = None
) -> ParsedDocument:
    """The file's document; `source` names it in errors (file:line:column), `relative` is
    its path within what was added (its id and title come from it unless `doc_id`)."""
    kind = kind_of(relative.name)
    if kind is None:
        raise InvalidInputError(
            f"{source}: not a lore file; lore is Markdown (.md, .markdown), text (.txt, .text) "
            "or a Foundry journal export (.json)."
        )
    check_length(text, source, MAX_LORE_FILE_CHARS)
    title = relative.stem
    if kind == "markdown":
        blocks = markdown_blocks(text, source)
    elif kind == "text":
        blocks = text_blocks(text, source)
    else:
        journal = foundry_journal(text, source)
        blocks, title = journal.blocks, journal.title or title
    sections = tuple(sections_of(blocks))
    if not sections:
        raise InvalidInputError(f"{source}: no text to add; the file has headings at most.")
    for section in sections:
        # JSON may spell one (\u0000); PostgreSQL's text cannot hold it.
        if "\x00" in section.heading or "\x00" in section.text or "\x00" in title:
            raise InvalidInputError(
                f"{source}: a NUL character under {section.heading or 'the top'!r}; lore is text."
            )
    return ParsedDocument(
        id=checked_id(doc_id) if doc_id is not None else document_id(relative),
        title=" ".join(title.split())[:MAX_TITLE_CHARS] or relative.name,
        source_kind=kind,
        source_name=str(relative),
        checksum=hashlib.sha256(text.encode()).hexdigest(),
        sections=sections,
    )
