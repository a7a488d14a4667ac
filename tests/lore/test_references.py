"""`DOC#heading`: which section a DM means."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.lore.references import SectionReference, parse_reference, resolve_heading

HEADINGS = ["", "Coast > Ports", "Coast > Tides", "Inland > Ports"]


def test_a_reference_is_a_document_and_a_heading_path() -> None:
    assert parse_reference(" atlas # Coast>  Tides ") == SectionReference("atlas", "Coast > Tides")
    assert parse_reference("atlas") == SectionReference("atlas", "")
    assert str(parse_reference("atlas#")) == "atlas"
    with pytest.raises(InvalidInputError, match="names no document"):
        parse_reference("#Coast")


def test_a_heading_matches_whole_or_by_its_unique_end_whatever_the_case() -> None:
    assert resolve_heading(parse_reference("atlas#coast > TIDES"), HEADINGS) == "Coast > Tides"
    assert resolve_heading(parse_reference("atlas#tides"), HEADINGS) == "Coast > Tides"
    assert resolve_heading(parse_reference("atlas"), HEADINGS) == ""


def test_an_ambiguous_or_unknown_heading_lists_the_sections() -> None:
    with pytest.raises(InvalidInputError, match="'Coast > Ports', 'Inland > Ports'"):
        resolve_heading(parse_reference("atlas#Ports"), HEADINGS)
    with pytest.raises(NotFoundError, match=r"atlas#Reefs: no such section.*'Coast > Tides'"):
        resolve_heading(parse_reference("atlas#Reefs"), HEADINGS)
    with pytest.raises(NotFoundError, match="no text before its first heading"):
        resolve_heading(parse_reference("atlas"), HEADINGS[1:])
