"""Foundry VTT journal exports as blocks. (pure)

Takes what Foundry's "Export Data" writes for one journal entry, a list of entries, or a
world export's `journal`. An entry's text pages (v10 and later: `pages` with `text.content`,
in their `sort` order, nested by their `title.level`) become headings with their text; an
older entry's `content` is its text. Image, video and PDF pages hold no text and are left
out. Several entries each head their own part of the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from glyphoxa_mcp.bounded_input import load_json
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.lore.html_blocks import html_blocks
from glyphoxa_mcp.lore.sections import MAX_HEADING_CHARS, Block, Heading

MAX_PAGE_LEVEL = 3


@dataclass(frozen=True)
class FoundryJournal:
    """The blocks of the export, and its title when it is one entry (its name)."""

    title: str | None
    blocks: list[Block]


def foundry_journal(text: str, source: str) -> FoundryJournal:
    entries = _entries(load_json(text, source), source)
    single = len(entries) == 1
    blocks: list[Block] = []
    for position, entry in enumerate(entries):
        where = f"{source}: journal entry {position + 1}"
        name = _name(entry, where)
        where = f"{source}: journal entry {name!r}"
        # One entry is the document itself; of several, each is a part of it.
        level = 0 if single else 1
        if not single:
            blocks.append(Heading(level, name))
        pages = [p for p in _listed(entry.get("pages")) if isinstance(p, dict)]
        if not pages:
            content = entry.get("content")
            if isinstance(content, str):
                blocks += html_blocks(content, where, level)
            continue
        ordered = sorted(enumerate(pages), key=lambda item: (_sort_key(item[1]), item[0]))
        for index, page in ordered:
            content = _dig(page, "text", "content")
            if page.get("type", "text") != "text" or not isinstance(content, str):
                continue
            page_where = f"{where}, page {index + 1}"
            page_level = level + _page_level(page)
            blocks.append(Heading(page_level, _name(page, page_where)))
            blocks += html_blocks(content, page_where, page_level)
    return FoundryJournal(_name(entries[0], source) if single else None, blocks)


def _entries(data: Any, source: str) -> list[dict[str, Any]]:
    if isinstance(data, dict) and isinstance(data.get("journal"), list):
        data = data["journal"]
    if isinstance(data, dict) and ("pages" in data or "content" in data):
        data = [data]
    if not isinstance(data, list) or not data:
        raise InvalidInputError(
            f"{source}: not a Foundry journal export: expected an entry (with 'name' and "
            "'pages'), a list of entries, or a world export with 'journal'."
        )
    for position, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise InvalidInputError(
                f"{source}: journal entry {position + 1} is not an object; every entry is."
            )
    return data


def _name(document: dict[str, Any], where: str) -> str:
    name = document.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError(f"{where}: 'name' must be a non-blank string.")
    name = " ".join(name.split())
    if len(name) > MAX_HEADING_CHARS:
        raise InvalidInputError(
            f"{where}: a name of {len(name)} characters; a heading has at most {MAX_HEADING_CHARS}."
        )
    return name


def _page_level(page: dict[str, Any]) -> int:
    level = _dig(page, "title", "level")
    if isinstance(level, int) and not isinstance(level, bool):
        return min(max(level, 1), MAX_PAGE_LEVEL)
    return 1


def _sort_key(page: dict[str, Any]) -> float:
    sort = page.get("sort")
    if isinstance(sort, int | float) and not isinstance(sort, bool):
        # Compared before converting: an integer of hundreds of digits has no float.
        return float(min(max(sort, -1e18), 1e18))
    return 0.0


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data
