"""The README stays a five-minute read, and no link in the documentation leads nowhere: every
relative link in README.md, BENCHMARKS.md and docs/ names a file or folder of the repository,
and a link to a heading of a Markdown page names a heading that page has (issue 29)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README_MAX_CHARACTERS = 12_000

# Pages kept only as a pointer to where their text went, for a file that names them and cannot
# change: sql/022 names docs/scaling.md, and an applied migration's checksum is recorded.
POINTERS = {Path("docs/scaling.md")}

FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").rglob("*.md"))]


def prose(text: str) -> str:
    """The text without fenced code blocks, whose brackets are code, not links."""
    return FENCE.sub("", text)


def links(text: str) -> list[str]:
    return LINK.findall(CODE_SPAN.sub("", prose(text)))


def anchors(text: str) -> set[str]:
    """The ids GitHub gives a page's headings: lower case, punctuation dropped, spaces as
    hyphens, and -1, -2, ... after a repeated one."""
    seen: Counter[str] = Counter()
    found = set()
    for heading in HEADING.findall(prose(text)):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return found


def broken_links(page: Path, text: str | None = None) -> list[str]:
    """What is wrong with each relative link of `page` (its `text`, read when not given)."""
    text = page.read_text() if text is None else text
    broken = []
    for target in links(text):
        if SCHEME.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        relative = linked.relative_to(ROOT) if linked.is_relative_to(ROOT) else None
        if relative is None or not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            broken.append(f"{target}: no heading #{anchor} in {relative}")
    return broken


def test_the_readme_is_read_in_five_minutes() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_MAX_CHARACTERS, (
        f"README.md is {size} characters; move detail into docs/ and link to it"
    )


def test_every_relative_link_in_the_docs_leads_to_a_file_and_heading_that_exist() -> None:
    broken = {
        str(page.relative_to(ROOT)): found for page in pages() if (found := broken_links(page))
    }
    assert not broken, broken


def test_the_link_check_sees_a_broken_link_and_a_missing_heading() -> None:
    page = ROOT / "docs" / "security.md"
    assert broken_links(page) == []
    assert anchors("## Load: 64 clients (`bench load`)\n## Load: 64 clients (`bench load`)") == {
        "load-64-clients-bench-load",
        "load-64-clients-bench-load-1",
    }
    text = "[a](guide/nowhere.md) [b](operations.md#no-such-heading) `[c](nowhere.md)`\n"
    assert links(text) == ["guide/nowhere.md", "operations.md#no-such-heading"]
    assert broken_links(ROOT / "docs" / "a-page.md", text) == [
        "guide/nowhere.md: no such file",
        "operations.md#no-such-heading: no heading #no-such-heading in docs/operations.md",
    ]


def test_every_page_in_docs_is_linked_from_somewhere() -> None:
    """A page nobody links to is a page nobody finds."""
    linked = set()
    for page in pages():
        for target in links(page.read_text()):
            if not SCHEME.match(target):
                linked.add((page.parent / target.partition("#")[0]).resolve())
    orphans = [
        str(page.relative_to(ROOT))
        for page in sorted((ROOT / "docs").rglob("*.md"))
        if page.resolve() not in linked and page.relative_to(ROOT) not in POINTERS
    ]
    assert not orphans, orphans
