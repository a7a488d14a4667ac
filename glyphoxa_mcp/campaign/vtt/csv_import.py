"""A spreadsheet of entities: `name`, `type`, optional `id` and `aliases` (separated by ;),
and any other columns as attributes. (pure)

Every row is checked and every problem reported together, each at its cell (line and
character column, as an editor shows them).
"""

from __future__ import annotations

import csv
import io
import re

from pydantic import ValidationError

from glyphoxa_mcp.campaign.problems import Problem, refuse
from glyphoxa_mcp.campaign.vtt.common import Ids, Imported, ImportResult
from glyphoxa_mcp.domain.models import NewEntity
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN, EntityType
from glyphoxa_mcp.domain.wording import rule_of
from glyphoxa_mcp.errors import InvalidInputError

TYPES = ", ".join(t.value for t in EntityType)
KNOWN_COLUMNS = ("id", "name", "type", "aliases")
ID_RULE = (
    "is not an id: letters, digits and _ . : - (a letter or digit first), at most 128 characters."
)


def parse_csv(text: str, source: str = "entities.csv") -> ImportResult:
    reader = csv.reader(io.StringIO(text), strict=True)
    rows: list[tuple[int, list[str]]] = []  # each row with the line it starts on
    try:
        while True:
            start = reader.line_num + 1
            try:
                rows.append((start, next(reader)))
            except StopIteration:
                break
    except csv.Error as exc:
        raise InvalidInputError(f"{source}:{reader.line_num}: not valid CSV ({exc}).") from None
    if not rows:
        raise InvalidInputError(f"{source}: the file is empty.")
    places = _Places(text, source)
    header = [h.strip().lower() for h in rows[0][1]]
    problems = [
        places.problem(1, header.index(column), column, f"the column {column!r} is given twice.")
        for i, column in enumerate(header)
        if column and header.index(column) != i
    ]
    problems += [
        Problem(source, 1, None, required, f"the header needs a {required!r} column.")
        for required in ("name", "type")
        if required not in header
    ]
    refuse(source, problems)  # without its columns no row can be read
    explicit = [row[header.index("id")].strip() for _, row in rows[1:] if "id" in header]
    ids, result = Ids(reserved=[i for i in explicit if i]), ImportResult()
    first_line_of_id: dict[str, int] = {}
    for line, row in rows[1:]:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.append(
                places.problem(
                    line,
                    min(len(row), len(header)),
                    "row",
                    f"{len(row)} cells, but the header has {len(header)}.",
                )
            )
            continue
        cells = {key: value.strip() for key, value in zip(header, row, strict=True)}

        def at(column: str, rule: str, line: int = line) -> Problem:
            return places.problem(line, header.index(column), column, rule)

        row_problems = []
        try:
            kind = EntityType(cells["type"].lower())
        except ValueError:
            row_problems.append(at("type", f"{cells['type']!r} is not one of: {TYPES}."))
        name = cells["name"]
        if not name:
            row_problems.append(at("name", "the name is blank."))
        given_id = cells.get("id", "")
        if given_id and not re.match(KEY_PATTERN, given_id):
            row_problems.append(at("id", f"the id {given_id!r} {ID_RULE}"))
        elif given_id in first_line_of_id:
            row_problems.append(
                at(
                    "id",
                    f"the id {given_id!r} is already given on line {first_line_of_id[given_id]}.",
                )
            )
        elif given_id:
            first_line_of_id[given_id] = line
        if row_problems:
            problems += row_problems
            continue
        try:
            entity = NewEntity(
                id=given_id or ids.next(name),
                type=kind,
                name=name,
                aliases=tuple(a.strip() for a in cells.get("aliases", "").split(";") if a.strip()),
                attributes={k: v for k, v in cells.items() if k not in KNOWN_COLUMNS and v},
            )
        except ValidationError as exc:
            for error in exc.errors():
                column = str(error["loc"][0]) if error["loc"] else "name"
                problems.append(at(column if column in header else "name", rule_of(error)))
            continue
        result.entities.append(Imported(entity.id or name, entity))
    refuse(source, problems)
    return result


class _Places:
    """Where a cell starts in the text: found only for a cell with a problem, by reading its
    row again with the quoting rules (a quoted cell may hold commas and line breaks)."""

    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.source = source

    def problem(self, line: int, cell: int, field: str, rule: str) -> Problem:
        place_line, column = self._cell_start(line, cell)
        return Problem(self.source, place_line, column, field, rule)

    def _cell_start(self, line: int, cell: int) -> tuple[int, int]:
        index, quoted, at_start = 0, False, True
        for number in range(line, len(self.lines) + 1):
            text = self.lines[number - 1]
            for column, char in enumerate(text, start=1):
                if index == cell and at_start:
                    return number, column
                at_start = False
                if char == '"':
                    quoted = not quoted
                elif char == "," and not quoted:
                    index += 1
                    at_start = True
                elif char in "\r\n" and not quoted:
                    return number, column  # past the row's last cell: its end
            if not quoted:
                return number, len(text) + 1
        return line, 1
