"""Markdown and plain text as blocks: what is a heading and what is not, and bad text named
by file, line and column."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.lore.markdown import markdown_blocks, text_blocks
from glyphoxa_mcp.lore.sections import Heading, Paragraph

BOOK = """---
title: The Coast
tags: [lore]
---
An opening paragraph
over two lines.

# The Coast #
## Saltmere
Fishing town.

```md
# not a heading inside a fence
```

Tides
=====
Twice a day.

---

After a rule.
####### seven hashes is text
#
"""


def test_headings_paragraphs_fences_and_front_matter() -> None:
    assert markdown_blocks(BOOK, "book.md") == [
        Paragraph("An opening paragraph\nover two lines."),
        Heading(1, "The Coast"),
        Heading(2, "Saltmere"),
        Paragraph("Fishing town."),
        Paragraph("```md\n# not a heading inside a fence\n```"),
        Heading(1, "Tides"),
        Paragraph("Twice a day."),
        Paragraph("After a rule.\n####### seven hashes is text"),
    ]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert markdown_blocks("~~~\n# kept\n\ntext", "f.md") == [Paragraph("~~~\n# kept\n\ntext")]


def test_plain_text_is_paragraphs_only() -> None:
    assert text_blocks("# not a heading\n\n  \nSecond\nline.\n", "notes.txt") == [
        Paragraph("# not a heading"),
        Paragraph("Second\nline."),
    ]


def test_bad_text_is_named_by_file_line_and_column() -> None:
    with pytest.raises(InvalidInputError, match=r"^book\.md:2:4: a NUL character"):
        markdown_blocks("fine\nbad\x00", "book.md")
    with pytest.raises(InvalidInputError, match=r"^notes\.txt:1:1: a NUL"):
        text_blocks("\x00", "notes.txt")
    long_heading = "## " + "H" * 201
    with pytest.raises(InvalidInputError, match=r"^book\.md:3:4: a heading of 201 characters"):
        markdown_blocks(f"text\n\n{long_heading}\n", "book.md")
