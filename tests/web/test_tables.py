"""The desk's tables read as tables: a header names every column, and no column stands
empty under its header."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

from tests.web.conftest import DeskClient

# Elements that fill a cell without text of their own: a control is something to do.
_CONTROLS = frozenset({"input", "button", "select", "textarea"})


@dataclass
class Cell:
    text: str = ""
    controls: list[dict[str, str]] = field(default_factory=list)

    @property
    def filled(self) -> bool:
        return bool(self.text.strip() or self.controls)

    @property
    def name(self) -> str:
        """What a screen reader says for a header: its text, or its control's label."""
        labels = [c.get("aria-label", "") for c in self.controls]
        return " ".join([self.text.strip(), *labels]).strip()


@dataclass
class Table:
    headers: list[Cell] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)


class Tables(HTMLParser):
    """The tables of a page, each as its column headers and its body's rows."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[Table] = []
        self._in_head = False
        self._cell: Cell | None = None
        self._nested = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append(Table())
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and not self._in_head and self.tables:
            self.tables[-1].rows.append([])
        elif tag in ("th", "td") and self.tables:
            self._cell = Cell()
            table = self.tables[-1]
            if self._in_head:
                table.headers.append(self._cell)
            elif table.rows:
                table.rows[-1].append(self._cell)
        elif tag in _CONTROLS and self._cell is not None:
            named = {k: v or "" for k, v in attrs}
            if named.get("type") != "hidden":
                self._cell.controls.append(named)

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self._in_head = False
        elif tag in ("th", "td"):
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.text += data


def tables_of(page: str) -> list[Table]:
    parser = Tables()
    parser.feed(page)
    return [table for table in parser.tables if table.headers]


PAGES = [
    "/c/demo/review",
    "/c/demo/sessions",
    "/c/demo/sessions/session-1",
    "/c/demo/sessions/session-2",
    "/c/demo/entities",
    "/c/demo/entities/brannoch",
    "/c/demo/as-npc?npc=brannoch",
    "/c/demo/as-npc?npc=berrit",
]


@pytest.mark.parametrize("path", PAGES)
async def test_every_column_has_a_header_and_something_under_it(
    reading_desk: DeskClient, path: str
) -> None:
    page = await reading_desk.get(path)

    tables = tables_of(page.text)
    assert page.status_code == 200 and tables
    for table in tables:
        names = [header.name for header in table.headers]
        assert all(names), f"{path}: a column without a header among {names}"
        assert table.rows, f"{path}: a table without rows under {names}"
        for column, name in enumerate(names):
            cells = [row[column] for row in table.rows if column < len(row)]
            assert any(cell.filled for cell in cells), f"{path}: column {name!r} is empty"


async def test_a_review_page_without_confidences_or_sessions_shows_neither_column(
    desk: DeskClient,
) -> None:
    queue = await desk.memory.curation.review_queue(0.7)
    rumours = [f"rel:{r.id}" for r in queue.relationships]
    rumours += [f"fact:{f.id}" for f in queue.facts]
    proposal = next(p for p in await desk.memory.pending.list() if p.source == "session")
    await desk.post(
        "/c/demo/review", {"items": [*rumours, f"import:{proposal.id}"], "action": "confirm"}
    )

    page = await desk.get("/c/demo/review")

    [table] = tables_of(page.text)
    assert [h.name for h in table.headers] == [
        "Select every item on this page",
        "item",
        "what",
        "source",
        "why it waits",
        "act",
    ]
    assert [cell.text.strip() for cell in table.rows[0][1:5]][1:] == [
        "Harbour Master Ilse (npc)",
        "csv",
        "imported from csv",
    ]
