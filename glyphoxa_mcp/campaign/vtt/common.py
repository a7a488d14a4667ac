"""What every import produces, and the helpers they share. (pure)"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from glyphoxa_mcp.domain.models import NewEntity, build
from glyphoxa_mcp.domain.vocabulary import EntityType, slugify
from glyphoxa_mcp.errors import InvalidInputError

MAX_TEXT = 4000


@dataclass(frozen=True)
class Imported:
    source_ref: str
    entity: NewEntity


@dataclass
class ImportResult:
    entities: list[Imported] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Text(HTMLParser):
    BLOCKS = frozenset({"p", "br", "div", "li", "h1", "h2", "h3", "h4", "tr", "section"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_to_text(html: object) -> str:
    """Readable text from VTT rich text: tags dropped, entities decoded, blank lines folded
    (none from a value that is not text)."""
    if not isinstance(html, str) or not html:
        return ""
    parser = _Text()
    parser.feed(html)
    parser.close()
    lines = [" ".join(line.split()) for line in "".join(parser.parts).splitlines()]
    return "\n".join(line for line in lines if line)[:MAX_TEXT]


def dig(data: Any, *path: str) -> Any:
    """data[a][b]... or None when any step is missing."""
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def listed(value: Any) -> list[Any]:
    """The value when it is a list; an export's misshapen field is skipped, not fatal."""
    return value if isinstance(value, list) else []


def compact_attributes(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v not in (None, "", [], {})}


class Ids:
    """Readable ids, unique within one import: a second 'Guard' becomes 'guard-2', and an
    id the file gives itself (`reserved`) is never made for another entity."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self._seen: dict[str, int] = {}
        self._taken = set(reserved)

    def next(self, name: str) -> str:
        base = slugify(name)
        while True:
            count = self._seen.get(base, 0) + 1
            self._seen[base] = count
            made = base if count == 1 else f"{base}-{count}"
            if made not in self._taken:
                self._taken.add(made)
                return made


def documents(data: Any, key: str, source: str) -> Iterable[dict[str, Any]]:
    items = data.get(key, []) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InvalidInputError(f"{source}: '{key}' should be a list of documents.")
    return [item for item in items if isinstance(item, dict) and item.get("name")]


def add_entity(
    result: ImportResult,
    ids: Ids,
    document: dict[str, Any],
    kind: EntityType,
    attributes: dict[str, Any],
    ref_key: str,
) -> None:
    """Append the document as an entity; `ref_key` names the export's own id field."""
    name = str(document["name"]).strip()
    entity = build(NewEntity, id=ids.next(name), type=kind, name=name, attributes=attributes)
    result.entities.append(Imported(str(document.get(ref_key) or entity.id), entity))
