"""A lore file as a document: kind by suffix, id from its path, checksum of its text."""

from __future__ import annotations

from pathlib import PurePath

import pytest

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.lore.documents import (
    check_distinct_ids,
    document_id,
    kind_of,
    parse_document,
)


def test_kind_and_id_come_from_the_path() -> None:
    assert [kind_of(n) for n in ("a.MD", "b.markdown", "c.txt", "d.json", "e.pdf")] == [
        "markdown",
        "markdown",
        "text",
        "foundry",
        None,
    ]
    assert document_id(PurePath("Chapters/The Temple's Bell.md")) == "chapters-the-temples-bell"
    assert document_id(PurePath("日本.md")).startswith("lore-")


def test_a_document_keeps_its_sections_and_a_checksum_of_its_text() -> None:
    doc = parse_document("# Bells\nThey ring.\n", "in/bells.md", PurePath("bells.md"))
    again = parse_document("# Bells\nThey ring.\n", "in/bells.md", PurePath("bells.md"))
    edited = parse_document("# Bells\nThey rang.\n", "in/bells.md", PurePath("bells.md"))
    assert (doc.id, doc.title, doc.source_kind, doc.source_name) == (
        "bells",
        "bells",
        "markdown",
        "bells.md",
    )
    assert [(s.heading, s.text) for s in doc.sections] == [("Bells", "They ring.")]
    assert doc.checksum == again.checksum != edited.checksum
    named = parse_document(
        '{"name": "Salt Law", "content": "<p>Finders keep.</p>"}',
        "x",
        PurePath("law.json"),
        "law-1",
    )
    assert (named.id, named.title, named.source_kind) == ("law-1", "Salt Law", "foundry")


@pytest.mark.parametrize(
    ("text", "name", "doc_id", "error"),
    [
        ("text", "notes.pdf", None, r"^src: not a lore file"),
        ("# Only a heading\n", "h.md", None, r"^src: no text to add"),
        ("   \n", "blank.txt", None, r"^src: no text to add"),
        ('{"name": "x", "content": "<p>a\\u0000</p>"}', "n.json", None, r"^src: a NUL character"),
        ("text", "a.md", "has space", r"^--id 'has space': a document id is"),
    ],
)
def test_a_file_that_cannot_be_lore_says_why(
    text: str, name: str, doc_id: str | None, error: str
) -> None:
    with pytest.raises(InvalidInputError, match=error):
        parse_document(text, "src", PurePath(name), doc_id)


def test_a_file_too_long_is_refused_at_its_place() -> None:
    with pytest.raises(InvalidInputError, match=r"^big\.txt:1:2000001: the file is longer"):
        parse_document("x" * 2_000_001, "big.txt", PurePath("big.txt"))


def test_two_files_of_one_addition_may_not_make_one_document() -> None:
    notes = parse_document("Bells.", "x", PurePath("bells.txt"))
    book = parse_document("# Bells\nRing.", "x", PurePath("bells.md"))
    check_distinct_ids([notes, parse_document("Other.", "x", PurePath("other.txt"))])
    with pytest.raises(InvalidInputError, match=r"bells\.txt and bells\.md would both be lore"):
        check_distinct_ids([notes, book])
