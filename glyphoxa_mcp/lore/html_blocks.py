"""Rich text (HTML, as Foundry VTT stores a journal page) as blocks. (pure)

Headings `h1`-`h6` become headings below the level the page sits at; block elements end a
paragraph; list items keep a dash; scripts and styles are dropped. Foundry's links to its
own documents (`@UUID[...]{Label}`) read as their label. The standard library's parser reads
in one pass, without recursion, whatever the nesting.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.lore.sections import MAX_HEADING_CHARS, Block, Heading, Paragraph

_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_BREAKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "dd", "div", "dl", "dt", "figcaption",
        "figure", "footer", "header", "hr", "li", "main", "ol", "p", "pre", "section",
        "table", "tr", "ul",
    }
)  # fmt: skip
_SKIPPED = frozenset({"script", "style", "template"})
_ENRICHER = re.compile(r"@[A-Za-z]+\[[^\]\n]*\](?:\{([^}\n]*)\})?")


class _Blocks(HTMLParser):
    def __init__(self, level_offset: int) -> None:
        super().__init__(convert_charrefs=True)
        self.level_offset = level_offset
        self.blocks: list[Block] = []
        self.text: list[str] = []
        self.heading_level: int | None = None
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
        elif tag in _HEADINGS:
            self.end_block()
            self.heading_level = _HEADINGS[tag]
        elif tag == "br":
            self.text.append("\n")
        elif tag in _BREAKS:
            self.end_block()
            if tag == "li":
                self.text.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(self.skipping - 1, 0)
        elif tag in _BREAKS or tag in _HEADINGS:
            self.end_block()

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.text.append(data)

    def end_block(self) -> None:
        text = _ENRICHER.sub(lambda m: m.group(1) or "", "".join(self.text))
        self.text.clear()
        if self.heading_level is not None:
            title = " ".join(text.split())
            if title:
                self.blocks.append(Heading(self.heading_level + self.level_offset, title))
            self.heading_level = None
            return
        lines = [" ".join(line.split()) for line in text.splitlines()]
        paragraph = "\n".join(line for line in lines if line)
        if paragraph:
            self.blocks.append(Paragraph(paragraph))


def html_blocks(html: str, where: str, level_offset: int = 0) -> list[Block]:
    """The headings and paragraphs of `html`; `where` names it in an error."""
    parser = _Blocks(level_offset)
    parser.feed(html)
    parser.close()
    parser.end_block()
    for block in parser.blocks:
        if isinstance(block, Heading) and len(block.text) > MAX_HEADING_CHARS:
            raise InvalidInputError(
                f"{where}: a heading of {len(block.text)} characters; a heading has at most "
                f"{MAX_HEADING_CHARS}."
            )
    return parser.blocks
