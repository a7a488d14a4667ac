"""The desk's pure parts: paging, transcript segments, where a form may send the browser,
and browser sessions."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.storage.models import TextCorrection
from glyphoxa_mcp.web.browser_sessions import IDLE_S, MAX_SESSIONS, BrowserSessions
from glyphoxa_mcp.web.forms import local_path
from glyphoxa_mcp.web.paging import Paging, page_holding, page_link
from glyphoxa_mcp.web.transcript import Segment, segments


def test_paging_counts_pages_and_their_neighbours() -> None:
    middle = Paging(page=2, total=120)
    last = Paging(page=3, total=120)
    empty = Paging(page=1, total=0)

    assert (middle.pages, middle.previous, middle.next) == (3, 1, 3)
    assert (middle.first_shown, middle.last_shown, middle.offset) == (51, 100, 50)
    assert (last.next, last.last_shown) == (None, 120)
    assert (empty.pages, empty.previous, empty.next, empty.first_shown) == (1, None, None, 0)
    assert Paging(page=2, total=120).of(list(range(120))) == list(range(50, 100))
    assert [page_holding(i) for i in (0, 49, 50)] == [1, 1, 2]


def test_a_page_link_keeps_the_query_and_drops_blanks() -> None:
    params = {"q": "kettle", "type": None, "page": "7"}

    assert page_link("/c/demo/entities", params, 2) == "/c/demo/entities?q=kettle&page=2"
    assert page_link("/c/demo/entities", params, 1) == "/c/demo/entities?q=kettle"
    assert page_link("/c/demo/sessions", {}, 1) == "/c/demo/sessions"


def correction(start: int, end: int, heard: str, entity: str) -> TextCorrection:
    return TextCorrection(start=start, end=end, heard=heard, entity=entity, stage="phonetic")


def test_corrected_names_are_cut_out_with_what_was_heard() -> None:
    raw = "ask bran knock about salt mirror"
    fixes = [
        correction(21, 32, "salt mirror", "Saltmere"),
        correction(4, 14, "bran knock", "Brannoch"),
    ]

    cut = segments(raw, "ask Brannoch about Saltmere", fixes)

    assert cut == [
        Segment("ask "),
        Segment("Brannoch", "bran knock"),
        Segment(" about "),
        Segment("Saltmere", "salt mirror"),
    ]


def test_a_line_changed_since_its_corrections_is_one_plain_segment() -> None:
    fixes = [correction(4, 14, "bran knock", "Brannoch")]

    assert segments("ask bran knock", "ask Brannoch, edited", fixes) == [
        Segment("ask Brannoch, edited")
    ]
    assert segments("ask bran", "ask bran", fixes) == [Segment("ask bran")]


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("/c/demo/review?page=2", "/c/demo/review?page=2"),
        ("/c/demo/sessions/s1?line=4#line-4", "/c/demo/sessions/s1?line=4#line-4"),
        ("//evil.example/x", None),
        ("https://evil.example/", None),
        ("/\\evil.example", None),
        ("/c/demo\r\nSet-Cookie: x", None),
        ("review", None),
        ("", None),
        (None, None),
    ],
)
def test_a_form_only_ever_sends_the_browser_to_a_page_of_this_site(
    given: str | None, kept: str | None
) -> None:
    assert local_path(given) == kept


def test_browser_sessions_expire_when_idle_and_sign_in_starts_a_new_one() -> None:
    now = [0.0]
    sessions = BrowserSessions(clock=lambda: now[0])
    visitor = sessions.start()

    signed_in = sessions.sign_in(visitor, "demo", "gxm_token")
    now[0] += IDLE_S - 1
    assert sessions.find(signed_in.id) is signed_in
    now[0] += IDLE_S + 1

    assert sessions.find(visitor.id) is None  # ended at sign-in
    assert sessions.find(signed_in.id) is None  # idle too long
    assert signed_in.id != visitor.id and signed_in.form_token != visitor.form_token
    assert signed_in.form_token_matches(signed_in.form_token)
    assert not signed_in.form_token_matches(visitor.form_token)


def test_the_oldest_browser_sessions_make_room_for_new_ones() -> None:
    sessions = BrowserSessions()
    first = sessions.start()

    for _ in range(MAX_SESSIONS):
        sessions.start()

    assert sessions.find(first.id) is None
