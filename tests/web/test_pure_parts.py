"""The desk's pure parts: paging, transcript segments, where a form may send the browser,
browser sessions, and text boxes sized to their text."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.domain.models import TextCorrection
from glyphoxa_mcp.web.browser_sessions import (
    MAX_VISITOR_NOTES,
    BrowserSessions,
    SignInLimits,
    SignInsFull,
)
from glyphoxa_mcp.web.forms import local_path
from glyphoxa_mcp.web.paging import Paging, page_holding, page_link
from glyphoxa_mcp.web.templating import MOST_ROWS, text_rows
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


def test_a_sign_in_ends_when_idle_and_at_its_lifetime_and_gets_a_new_id() -> None:
    now = [0.0]
    sessions = BrowserSessions(SignInLimits(idle_s=60, lifetime_s=150), clock=lambda: now[0])
    visitor = sessions.for_cookie(None)

    signed_in = sessions.sign_in(visitor, "demo", "gxm_token")
    assert signed_in.id != visitor.id and signed_in.form_token != visitor.form_token
    assert not signed_in.form_token_matches(visitor.form_token)
    for _ in range(2):  # used every 59 s: not idle
        now[0] += 59
        assert sessions.for_cookie(signed_in.id) is signed_in
    now[0] += 59  # 177 s old: past its lifetime, however used
    assert not sessions.for_cookie(signed_in.id).signed_in

    idle = sessions.sign_in(sessions.for_cookie(None), "demo", "gxm_token")
    now[0] += 61
    assert not sessions.for_cookie(idle.id).signed_in
    assert sessions.signed_in_count == 0


def test_a_visitor_is_stored_nowhere_and_its_form_token_belongs_to_its_cookie() -> None:
    sessions = BrowserSessions()

    visitors = [sessions.for_cookie(None) for _ in range(5_000)]

    assert sessions.signed_in_count == 0
    again = sessions.for_cookie(visitors[0].id)
    assert not again.signed_in and again.form_token_matches(visitors[0].form_token)
    assert not again.form_token_matches(visitors[1].form_token)
    # Another process (another secret) does not take this one's form tokens.
    assert not BrowserSessions().for_cookie(visitors[0].id).form_token_matches(again.form_token)
    assert sessions.for_cookie("not a cookie of ours").id != "not a cookie of ours"


def test_a_full_desk_refuses_a_sign_in_and_ends_none_to_make_room() -> None:
    sessions = BrowserSessions(SignInLimits(max_sign_ins=2))
    held = [sessions.sign_in(sessions.for_cookie(None), "demo", "gxm_token") for _ in range(2)]

    with pytest.raises(SignInsFull, match="raise the limit"):
        sessions.sign_in(sessions.for_cookie(None), "demo", "gxm_token")

    assert all(sessions.for_cookie(s.id) is s for s in held)
    # Signing in again from a signed-in browser takes its own place.
    assert sessions.sign_in(held[0], "demo", "gxm_token").signed_in
    assert sessions.signed_in_count == 2


def test_a_visitors_notes_wait_for_its_next_page_in_a_store_of_their_own() -> None:
    sessions = BrowserSessions(SignInLimits(max_sign_ins=1))
    dm = sessions.sign_in(sessions.for_cookie(None), "demo", "gxm_token")
    visitor = sessions.for_cookie(None)
    visitor.note("ok", "Signed out.")
    sessions.keep(visitor)

    for _ in range(MAX_VISITOR_NOTES):
        crowd = sessions.for_cookie(None)
        crowd.note("error", "token: Unknown token.")
        sessions.keep(crowd)

    assert sessions.for_cookie(visitor.id).notes == []  # the oldest notes made room
    assert sessions.for_cookie(dm.id) is dm  # a sign-in never does
    returning = sessions.for_cookie(crowd.id)
    assert [n.text for n in returning.take_notes()] == ["token: Unknown token."]


def test_a_text_box_has_a_row_for_each_wrapped_line_and_one_to_write_on() -> None:
    assert text_rows("", 100) == 3  # room to write
    assert text_rows(None, 100) == 3
    assert text_rows("x" * 100, 100) == 3
    assert text_rows("x" * 1_000, 100) == 11
    assert text_rows("one\ntwo\n\nfour\n" + "y" * 250, 100) == 8
    assert text_rows("word " * 10_000, 100) == MOST_ROWS  # then it scrolls
