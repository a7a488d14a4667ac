"""Blocks into sections: heading paths, and pieces of a bounded size cut at the largest
boundary that allows it."""

from __future__ import annotations

from glyphoxa_mcp.lore.sections import (
    Heading,
    LoreSection,
    Paragraph,
    embedding_text,
    pieces,
    sections_of,
)


def test_each_section_carries_the_path_of_headings_above_it() -> None:
    blocks = [
        Paragraph("Before any heading."),
        Heading(1, "Part"),
        Heading(2, "Chapter"),
        Paragraph("In the chapter."),
        Heading(3, "Scene"),
        Paragraph("In the scene."),
        Heading(2, "Next chapter"),
        Paragraph("Later."),
        Heading(1, "Appendix"),
        Paragraph("At the end."),
    ]
    assert sections_of(blocks) == [
        LoreSection("", "Before any heading."),
        LoreSection("Part > Chapter", "In the chapter."),
        LoreSection("Part > Chapter > Scene", "In the scene."),
        LoreSection("Part > Next chapter", "Later."),
        LoreSection("Appendix", "At the end."),
    ]


def test_a_heading_without_text_of_its_own_gives_no_section() -> None:
    assert sections_of([Heading(1, "Empty"), Paragraph("  "), Heading(1, "Full")]) == []


def test_long_sections_are_cut_at_paragraphs_then_sentences_then_spaces() -> None:
    paragraphs = ["a" * 30, "b" * 30, "c" * 30]
    assert pieces(paragraphs, 64) == ["a" * 30 + "\n\n" + "b" * 30, "c" * 30]
    sentences = "One two three. Four five six. Seven eight nine."
    assert pieces([sentences], 20) == ["One two three.", "Four five six.", "Seven eight nine."]
    assert pieces([sentences], 30) == ["One two three. Four five six.", "Seven eight nine."]
    assert pieces(["word " * 20], 24) == ["word word word word word", *["word " * 4 + "word"] * 3]
    assert pieces(["x" * 50], 20) == ["x" * 20, "x" * 20, "x" * 10]


def test_every_piece_stays_within_the_bound_and_loses_no_word() -> None:
    text = " ".join(f"Sentence {n} says {'much ' * (n % 7)}here." for n in range(200))
    found = pieces([text, "Short one.", text], 300)
    assert all(len(piece) <= 300 for piece in found)
    assert " ".join(" ".join(found).split()) == " ".join(f"{text} Short one. {text}".split())


def test_a_piece_is_embedded_with_where_it_stands() -> None:
    assert embedding_text("Atlas", LoreSection("Coast > Ports", "Ships.")) == (
        "Atlas > Coast > Ports\nShips."
    )
    assert embedding_text("Atlas", LoreSection("", "Intro.")) == "Atlas\nIntro."
