"""A spreadsheet of entities: `name`, `type`, optional `id` and `aliases` (separated by ;),
and any other columns as attributes. (pure)"""

from __future__ import annotations

import csv
import io

from glyphoxa_mcp.campaign.vtt.common import Ids, Imported, ImportResult
from glyphoxa_mcp.domain.models import NewEntity, build
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import InvalidInputError

TYPES = ", ".join(t.value for t in EntityType)


def parse_csv(text: str, source: str = "entities.csv") -> ImportResult:
    reader = csv.reader(io.StringIO(text), strict=True)
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise InvalidInputError(f"{source}:{reader.line_num}: not valid CSV ({exc}).") from None
    if not rows:
        raise InvalidInputError(f"{source}: the file is empty.")
    header = [h.strip().lower() for h in rows[0]]
    for required in ("name", "type"):
        if required not in header:
            raise InvalidInputError(f"{source}:1: the header needs a {required!r} column.")
    ids, result = Ids(), ImportResult()
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InvalidInputError(
                f"{source}:{line}: {len(row)} cells, but the header has {len(header)}."
            )
        cells = {key: value.strip() for key, value in zip(header, row, strict=True)}
        column = header.index("type") + 1
        try:
            kind = EntityType(cells["type"].lower())
        except ValueError:
            raise InvalidInputError(
                f"{source}:{line}:{column}: type {cells['type']!r} is not one of: {TYPES}."
            ) from None
        name = cells["name"]
        if not name:
            raise InvalidInputError(f"{source}:{line}:{header.index('name') + 1}: name is blank.")
        entity = build(
            NewEntity,
            id=cells.get("id") or ids.next(name),
            type=kind,
            name=name,
            aliases=tuple(a.strip() for a in cells.get("aliases", "").split(";") if a.strip()),
            attributes={
                k: v for k, v in cells.items() if k not in ("id", "name", "type", "aliases") and v
            },
        )
        result.entities.append(Imported(entity.id or name, entity))
    return result
