"""A document as blocks (headings and paragraphs), and blocks as sections: the text under
each heading, with the path of headings above it, in pieces of a bounded size. (pure)

A piece is what search_facts returns and an embedding is made of, so it stays short enough
for a prompt and for the embedder's window: a long section is cut at paragraph boundaries,
a long paragraph at sentence boundaries, and only a sentence longer than a piece at a space.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# About 300 tokens: two pieces fit an NPC's default lore budget (recall/hot_budgets.py).
MAX_SECTION_CHARS = 1200
MAX_HEADING_CHARS = 200
HEADING_SEPARATOR = " > "

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


Block = Heading | Paragraph


@dataclass(frozen=True)
class LoreSection:
    """A piece of a document: its heading path ("Part > Chapter", empty before the first
    heading) and its text."""

    heading: str
    text: str


def sections_of(blocks: Iterable[Block], limit: int = MAX_SECTION_CHARS) -> list[LoreSection]:
    """The document's sections in order; a heading with no text of its own gives none."""
    path: list[Heading] = []
    paragraphs: list[str] = []
    found: list[LoreSection] = []

    def close_section() -> None:
        heading = HEADING_SEPARATOR.join(h.text for h in path)
        found.extend(LoreSection(heading, piece) for piece in pieces(paragraphs, limit))
        paragraphs.clear()

    for block in blocks:
        if isinstance(block, Heading):
            close_section()
            while path and path[-1].level >= block.level:
                path.pop()
            path.append(block)
        elif block.text.strip():
            paragraphs.append(block.text.strip())
    close_section()
    return found


def pieces(paragraphs: Iterable[str], limit: int) -> list[str]:
    """Paragraphs joined by blank lines into pieces of at most `limit` characters."""
    found: list[str] = []
    current = ""
    for part in _bounded_parts(paragraphs, limit):
        joined = f"{current}\n\n{part}" if current else part
        if len(joined) <= limit:
            current = joined
        else:
            found.append(current)
            current = part
    if current:
        found.append(current)
    return found


def _bounded_parts(paragraphs: Iterable[str], limit: int) -> Iterator[str]:
    """Each paragraph, or when it is longer than `limit`, its sentences grouped up to it."""
    for paragraph in paragraphs:
        if len(paragraph) <= limit:
            yield paragraph
            continue
        current = ""
        for sentence in _SENTENCE_END.split(paragraph):
            for part in _cut(sentence, limit):
                joined = f"{current} {part}" if current else part
                if len(joined) <= limit:
                    current = joined
                else:
                    yield current
                    current = part
        if current:
            yield current


def _cut(sentence: str, limit: int) -> Iterator[str]:
    """A sentence in parts of at most `limit` characters, cut at the last space that allows
    it (anywhere, in a run without spaces)."""
    while len(sentence) > limit:
        space = sentence.rfind(" ", 0, limit + 1)
        cut = space if space > 0 else limit
        yield sentence[:cut].rstrip()
        sentence = sentence[cut:].lstrip()
    if sentence:
        yield sentence


def embedding_text(title: str, section: LoreSection) -> str:
    """What a piece's vector is made of: where it stands, then its text."""
    place = HEADING_SEPARATOR.join(part for part in (title, section.heading) if part)
    return f"{place}\n{section.text}"
