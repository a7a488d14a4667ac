from __future__ import annotations

import pytest

from glyphoxa_mcp.storage.vector_search import MAX_EF_SEARCH, wider_search


def test_an_unfiltered_search_that_found_nothing_tries_the_widest_search_first() -> None:
    # Only deleted rows were near: the exact answer would read the whole campaign.
    assert wider_search(0, 20, 40, filtered=False) == MAX_EF_SEARCH
    assert wider_search(0, 20, MAX_EF_SEARCH, filtered=False) is None
    assert wider_search(5, 20, 40, filtered=False) == wider_search(5, 20, 40)


@pytest.mark.parametrize(
    ("found", "k", "ef_search", "wider"),
    [
        (20, 20, 40, None),  # enough already
        (0, 20, 40, None),  # nothing survived the filter: the exact answer is cheap
        (16, 20, 40, 100),  # 40 % survive: ask for enough to keep 2 x 20
        (1, 20, 40, None),  # 2.5 % survive: more than MAX_EF_SEARCH needed, go exact
        (10, 20, 500, None),
    ],
)
def test_a_short_index_answer_is_asked_again_only_when_a_wider_search_can_fill_it(
    found: int, k: int, ef_search: int, wider: int | None
) -> None:
    assert wider_search(found, k, ef_search) == wider
    if wider is not None:
        assert wider <= MAX_EF_SEARCH
