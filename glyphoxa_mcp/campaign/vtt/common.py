"""What every import produces, and the helpers they share. (pure)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from pydantic import ValidationError

from glyphoxa_mcp.bounded_input import line_column, load_json
from glyphoxa_mcp.campaign.problems import Path, Problem, field_name, refuse
from glyphoxa_mcp.domain.models import NewEntity
from glyphoxa_mcp.domain.vocabulary import EntityType, slugify
from glyphoxa_mcp.domain.wording import rule_of

MAX_TEXT = 4000
_WHITESPACE = re.compile(r"[ \t\n\r]*")


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


class JsonPlaces:
    """Where a value of a JSON text starts, found only for a value with a problem: each
    container on the way is read once, however many problems it holds."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self._decoder = json.JSONDecoder()
        self._containers: dict[int, dict[str | int, int]] = {}

    def problem(self, path: Path, rule: str) -> Problem:
        index = self._find(path)
        line, column = line_column(self.text, index) if index is not None else (None, None)
        return Problem(self.source, line, column, field_name(path), rule)

    def _find(self, path: Path) -> int | None:
        index: int | None = _WHITESPACE.match(self.text, 0).end()  # type: ignore[union-attr]
        for part in path:
            assert index is not None
            index = self._parts(index).get(part)
            if index is None:
                return None
        return index

    def _parts(self, start: int) -> dict[str | int, int]:
        """Where each member (by key) or element (by position) of a container starts."""
        if start in self._containers:
            return self._containers[start]
        text, parts = self.text, {}
        opening = text[start : start + 1]
        if opening in ("{", "["):
            index, position = self._skip_space(start + 1), 0
            while text[index : index + 1] not in ("}", "]", ""):
                key: str | int = position
                if opening == "{":
                    key, index = self._decoder.raw_decode(text, index)
                    index = self._skip_space(self._skip_space(index) + 1)  # past the colon
                parts[key] = index
                _, index = self._decoder.raw_decode(text, index)
                index = self._skip_space(index)
                if text[index : index + 1] == ",":
                    index = self._skip_space(index + 1)
                position += 1
        self._containers[start] = parts
        return parts

    def _skip_space(self, index: int) -> int:
        return _WHITESPACE.match(self.text, index).end()  # type: ignore[union-attr]


class ExportReader:
    """One export read into entities, each problem of it kept to be reported with the rest."""

    def __init__(self, text: str, source: str) -> None:
        self.data = load_json(text, source)
        self.source = source
        self.places = JsonPlaces(text, source)
        self.problems: list[Problem] = []
        self.ids = Ids()
        self.result = ImportResult()

    def documents(self, key: str) -> list[tuple[int, dict[str, Any]]]:
        """The named documents of a list, with their positions in it."""
        items = self.data.get(key, []) if isinstance(self.data, dict) else None
        if not isinstance(items, list):
            self.problems.append(self.places.problem((key,), "should be a list of documents."))
            return []
        return [
            (i, item) for i, item in enumerate(items) if isinstance(item, dict) and item.get("name")
        ]

    def add(
        self,
        key: str,
        position: int,
        document: dict[str, Any],
        kind: EntityType,
        attributes: dict[str, Any],
        ref_key: str,
        name_field: str = "name",
    ) -> None:
        """Add the document as an entity; `ref_key` names the export's own id field."""
        name = str(document[name_field]).strip()
        try:
            entity = NewEntity(id=self.ids.next(name), type=kind, name=name, attributes=attributes)
        except ValidationError as exc:
            for error in exc.errors():
                at = name_field if error["loc"] and error["loc"][0] == "name" else None
                path = (key, position, at) if at else (key, position)
                self.problems.append(self.places.problem(path, rule_of(error)))
            return
        self.result.entities.append(Imported(str(document.get(ref_key) or entity.id), entity))

    def finish(self) -> ImportResult:
        refuse(self.source, self.problems)
        return self.result
