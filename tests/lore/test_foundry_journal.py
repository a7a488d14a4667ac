"""Foundry VTT journal exports (one entry, a list, a world export) and their HTML as blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.lore.foundry_journal import foundry_journal
from glyphoxa_mcp.lore.html_blocks import html_blocks
from glyphoxa_mcp.lore.sections import Heading, Paragraph, sections_of

WORLD = Path(__file__).parents[1] / "fixtures" / "vtt" / "foundry-world.json"

ENTRY = {
    "name": "The Drowned Temple",
    "pages": [
        {"name": "Rumours", "type": "text", "sort": 200, "title": {"level": 2},
         "text": {"content": "<p>Bells under the water.</p>"}},
        {"name": "History", "type": "text", "sort": 100, "title": {"level": 1},
         "text": {"content": "<h2>Founding</h2><p>Built by @UUID[Actor.x]{Saint Ilse}.</p>"
                             "<ul><li>one</li><li>two</li></ul><script>alert(1)</script>"}},
        {"name": "Map", "type": "image", "src": "maps/temple.webp"},
    ],
}  # fmt: skip


def test_html_headings_nest_below_the_page_and_text_stays_readable() -> None:
    html = "<h1>A</h1><p>x &amp; y<br>z</p><div><h3>B</h3>@Check[dex]</div><style>p{}</style>"
    assert html_blocks(html, "page", 2) == [
        Heading(3, "A"),
        Paragraph("x & y\nz"),
        Heading(5, "B"),
    ]


def test_one_entry_is_the_document_its_pages_in_order_and_by_level() -> None:
    journal = foundry_journal(json.dumps(ENTRY), "temple.json")
    assert journal.title == "The Drowned Temple"
    assert [(s.heading, s.text) for s in sections_of(journal.blocks)] == [
        ("History > Founding", "Built by Saint Ilse.\n\n- one\n\n- two"),
        ("History > Rumours", "Bells under the water."),
    ]


def test_a_world_export_gives_each_entry_its_part_old_entries_included() -> None:
    journal = foundry_journal(WORLD.read_text(), "world.json")
    assert journal.title is None
    assert [(s.heading, s.text[:20]) for s in sections_of(journal.blocks)] == [
        ("The Drowned Prophecy > Text > Verse", "When the bell is sil"),
        ("Salt Law", "Whatever washes asho"),
    ]
    assert foundry_journal(json.dumps([ENTRY, ENTRY]), "two.json").title is None


@pytest.mark.parametrize(
    ("export", "error"),
    [
        ('{"name": "x",\n "pages": [}', r"^j\.json:2:12: not valid JSON"),
        ("[" * 200, r"^j\.json:1:101: nested deeper than 100 levels"),
        ('{"actors": []}', r"^j\.json: not a Foundry journal export"),
        ("[]", r"^j\.json: not a Foundry journal export"),
        ('[{"name": "ok", "content": ""}, 3]', r"^j\.json: journal entry 2 is not an object"),
        ('{"pages": []}', r"^j\.json: journal entry 1: 'name' must be a non-blank string"),
        (
            '{"name": "E", "pages": [{"type": "text", "text": {"content": "<p>x</p>"}}]}',
            r"^j\.json: journal entry 'E', page 1: 'name' must be",
        ),
        (
            json.dumps({"name": "E", "content": f"<h1>{'h' * 201}</h1>"}),
            r"^j\.json: journal entry 'E': a heading of 201 characters",
        ),
    ],
)
def test_a_bad_export_says_where_and_what_is_wrong(export: str, error: str) -> None:
    with pytest.raises(InvalidInputError, match=error):
        foundry_journal(export, "j.json")
