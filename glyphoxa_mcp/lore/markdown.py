"""Markdown and plain text as blocks. (pure)

Markdown: ATX (`## Title`) and setext (a line underlined with `===` or `---`) headings;
paragraphs end at blank lines; a fenced code block is one paragraph, and what looks like a
heading inside it is not one; YAML front matter at the very top is the file's metadata, not
its text. Plain text has paragraphs only.
"""

from __future__ import annotations

import re

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.lore.sections import MAX_HEADING_CHARS, Block, Heading, Paragraph

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_FRONT_MATTER_END = frozenset({"---", "..."})
# Front matter longer than this is not front matter but a document that starts with a rule.
MAX_FRONT_MATTER_LINES = 200


def check_text(text: str, source: str) -> None:
    """Text we can store: no NUL character (PostgreSQL's text cannot hold one)."""
    index = text.find("\x00")
    if index >= 0:
        line = text.count("\n", 0, index) + 1
        column = index - (text.rfind("\n", 0, index) + 1) + 1
        raise InvalidInputError(
            f"{source}:{line}:{column}: a NUL character; lore files are text (UTF-8)."
        )


def text_blocks(text: str, source: str) -> list[Block]:
    """A plain text file's paragraphs (separated by blank lines)."""
    check_text(text, source)
    return [Paragraph(p.strip()) for p in re.split(r"\n(?:[ \t]*\n)+", text) if p.strip()]


def markdown_blocks(text: str, source: str) -> list[Block]:
    """A Markdown file's headings and paragraphs, in order."""
    check_text(text, source)
    lines = text.splitlines()
    blocks: list[Block] = []
    paragraph: list[str] = []
    fence: str | None = None
    front_matter = _front_matter_lines(lines)

    def end_paragraph() -> None:
        if paragraph:
            blocks.append(Paragraph("\n".join(paragraph)))
            paragraph.clear()

    for number, line in enumerate(lines, start=1):
        if number <= front_matter:
            continue
        if fence is not None:
            paragraph.append(line)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
                end_paragraph()
            continue
        opening = _FENCE.match(line)
        if opening:
            end_paragraph()
            fence = opening.group(1)
            paragraph.append(line)
            continue
        atx = _ATX.match(line)
        if atx:
            end_paragraph()
            title = (atx.group(2) or "").strip()
            if title:
                column = line.index(title) + 1
                blocks.append(Heading(len(atx.group(1)), _heading(title, source, number, column)))
            continue
        setext = _SETEXT.match(line)
        if setext and paragraph:
            title = " ".join(part.strip() for part in paragraph)
            paragraph.clear()
            level = 1 if setext.group(1).startswith("=") else 2
            blocks.append(Heading(level, _heading(title, source, number - 1, 1)))
            continue
        if not line.strip() or setext:  # a blank line, or a `---` rule between paragraphs
            end_paragraph()
            continue
        paragraph.append(line)
    end_paragraph()
    return blocks


def _heading(title: str, source: str, line: int, column: int) -> str:
    if len(title) > MAX_HEADING_CHARS:
        raise InvalidInputError(
            f"{source}:{line}:{column}: a heading of {len(title)} characters; a heading has at "
            f"most {MAX_HEADING_CHARS}."
        )
    return title


def _front_matter_lines(lines: list[str]) -> int:
    """How many lines at the top are YAML front matter (its `---` fences included)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for index in range(1, min(len(lines), MAX_FRONT_MATTER_LINES + 1)):
        if lines[index].strip() in _FRONT_MATTER_END:
            return index + 1
    return 0
