"""Long lists a page at a time: which page, what it holds, and the links around it. (pure)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlencode

T = TypeVar("T")

PAGE_SIZE = 50
# Far past any campaign's last page; keeps the offset a database is asked for small.
MAX_PAGE = 100_000


@dataclass(frozen=True)
class Paging:
    page: int
    total: int
    size: int = PAGE_SIZE

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.size

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))

    @property
    def previous(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def next(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None

    @property
    def first_shown(self) -> int:
        return min(self.offset + 1, self.total)

    @property
    def last_shown(self) -> int:
        return min(self.offset + self.size, self.total)

    def of(self, items: Sequence[T]) -> list[T]:
        """This page's share of a list held whole."""
        return list(items[self.offset : self.offset + self.size])


def page_holding(index: int, size: int = PAGE_SIZE) -> int:
    """The page on which the item at `index` (from 0) is shown."""
    return index // size + 1


def page_link(path: str, params: dict[str, str | None], page: int) -> str:
    """`path` with the same query, on `page`."""
    query = {key: value for key, value in params.items() if value and key != "page"}
    if page > 1:
        query["page"] = str(page)
    return f"{path}?{urlencode(query)}" if query else path
