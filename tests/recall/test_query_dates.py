from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.recall.query_dates import NamedPeriod, named_period


def day(year: int, month: int, date: int) -> datetime:
    return datetime(year, month, date, tzinfo=UTC)


@pytest.mark.parametrize(
    "query",
    [
        "What did Maria plan on 7 July, 2023?",
        "What did Maria plan on July 7, 2023?",
        "what happened on the 7th of July 2023",
        "anything on Jul. 7 2023?",
        "notes from 2023-07-07",
    ],
)
def test_a_named_day_covers_that_day_and_the_next(query: str) -> None:
    assert named_period(query) == NamedPeriod(day(2023, 7, 7), day(2023, 7, 9))


def test_a_month_and_year_cover_the_month() -> None:
    assert named_period("What did John host in December 2023?") == NamedPeriod(
        day(2023, 12, 1), day(2024, 1, 1)
    )
    assert named_period("in may, 2024") == NamedPeriod(day(2024, 5, 1), day(2024, 6, 1))


@pytest.mark.parametrize(
    "query",
    [
        "What did Grimjaw promise?",
        "the 5000 gold from 2023",
        "last week at the inn",
        "2023-13-01",
        "you may 2 of them",
    ],
)
def test_no_real_calendar_date_names_no_period(query: str) -> None:
    assert named_period(query) is None


def test_an_impossible_day_gives_way_to_a_real_one_or_else_its_month() -> None:
    assert named_period("not 31 February, 2023 but March 2, 2023") == NamedPeriod(
        day(2023, 3, 2), day(2023, 3, 4)
    )
    assert named_period("on 31 February, 2023") == NamedPeriod(day(2023, 2, 1), day(2023, 3, 1))
