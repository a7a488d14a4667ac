"""`lore add|list|remove|pin|unpin` as a DM runs them (in process: see tests/cli/runner.py),
with the default offline embedder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from glyphoxa_mcp.db.database import Database
from tests.cli.conftest import Cli
from tests.cli.runner import Ran

ATLAS = """# The Coast
## Saltmere
A fishing town under the cliffs.

## Tides
Twice a day the causeway floods.
"""
FOUNDRY_ENTRY = {
    "name": "Salt Law",
    "pages": [{"name": "Finders", "type": "text", "text": {"content": "<p>Finders keep.</p>"}}],
}


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "lore"
    (folder / "regions").mkdir(parents=True)
    (folder / ".obsidian").mkdir()
    (folder / "regions" / "atlas.md").write_text(ATLAS, encoding="utf-8")
    (folder / "rumours.txt").write_text("The bells ring under the sea.\n", encoding="utf-8")
    (folder / "law.json").write_text(json.dumps(FOUNDRY_ENTRY), encoding="utf-8")
    (folder / "map.png").write_bytes(b"\x89PNG")
    (folder / ".obsidian" / "hidden.md").write_text("# Settings\nnot lore\n", encoding="utf-8")
    return folder


def run(glyphoxa: Cli, *args: str, expect: int = 0) -> Ran:
    ran = glyphoxa(*args, "--campaign", "coast")
    assert ran.returncode == expect, ran.stderr
    assert "Traceback" not in ran.stderr
    return ran


def data(glyphoxa: Cli, *args: str) -> Any:
    return json.loads(run(glyphoxa, *args, "--json").stdout)


@pytest.mark.slow
def test_a_dm_adds_a_folder_of_lore_pins_it_and_removes_it(glyphoxa: Cli, library: Path) -> None:
    run(glyphoxa, "entity", "add", "Mira", "npc")
    run(glyphoxa, "entity", "add", "Vask", "npc")
    run(glyphoxa, "entity", "add", "Saltmere", "location")
    added = data(glyphoxa, "lore", "add", str(library))
    assert [(d["id"], d["action"], d["sections"]) for d in added["documents"]] == [
        ("law", "added", 1),
        ("regions-atlas", "added", 2),
        ("rumours", "added", 1),
    ]
    assert added["skipped"] == ["map.png"]
    again = run(glyphoxa, "lore", "add", str(library)).stdout
    assert "law: unchanged (1 section)" in again and "regions-atlas: unchanged" in again

    secret = library / "pact.md"
    secret.write_text("# Pact\nVask swore it.\n", encoding="utf-8")
    added = data(glyphoxa, "lore", "add", str(secret), "--secret", "--known-by", "Vask")
    assert added["documents"][0]["action"] == "added"
    listed = {d["id"]: d for d in data(glyphoxa, "lore", "list")}
    assert listed["pact"]["visibility"] == {"secret": True, "known_by": ["vask"], "hearsay": []}
    assert listed["law"]["title"] == "Salt Law" and listed["law"]["source_kind"] == "foundry"
    assert "secret, known by vask" in run(glyphoxa, "lore", "list").stdout

    pinned = run(glyphoxa, "lore", "pin", "regions-atlas#tides", "--npc", "Mira").stdout
    assert pinned.strip() == "Pinned regions-atlas#The Coast > Tides to mira's hot context."
    refused = run(glyphoxa, "lore", "pin", "pact#Pact", "--npc", "Mira", expect=2)
    assert "'mira' may not know lore document 'pact'" in refused.stderr
    not_npc = run(glyphoxa, "lore", "pin", "pact#Pact", "--npc", "Saltmere", expect=2)
    assert "Saltmere is a location; lore is pinned to NPCs" in not_npc.stderr
    shown = data(glyphoxa, "lore", "list", "regions-atlas")
    assert [(h["heading"], h["pinned_to"]) for h in shown["headings"]] == [
        ("The Coast > Saltmere", []),
        ("The Coast > Tides", ["mira"]),
    ]

    (library / "regions" / "atlas.md").write_text(ATLAS.replace("## Tides\n", ""), "utf-8")
    edited = run(glyphoxa, "lore", "add", str(library)).stdout
    assert "regions-atlas: updated (1 section)" in edited
    assert "Unpinned regions-atlas#The Coast > Tides from mira" in edited
    unpinned = run(glyphoxa, "lore", "unpin", "regions-atlas#Saltmere", "--npc", "mira", expect=2)
    assert "regions-atlas#The Coast > Saltmere is not pinned to mira" in unpinned.stderr

    removed = run(glyphoxa, "lore", "remove", "pact").stdout
    assert removed.strip() == "Removed lore document pact with its 1 section and 0 pins."
    assert "pact" not in {d["id"] for d in data(glyphoxa, "lore", "list")}
    gone = run(glyphoxa, "lore", "remove", "pact", expect=2)
    assert "No lore document 'pact'" in gone.stderr
    unknown = run(glyphoxa, "lore", "pin", "regions-atlas#Reefs", "--npc", "Mira", expect=2)
    assert "regions-atlas#Reefs: no such section" in unknown.stderr


async def test_a_folder_with_bad_files_names_each_and_adds_nothing(
    glyphoxa: Cli, library: Path, db256: Database
) -> None:
    (library / "broken.json").write_text('{"name": "x",\n  "pages": [}', encoding="utf-8")
    (library / "regions" / "nul.md").write_text("# Fine\nthen\x00", encoding="utf-8")
    (library / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    ran = run(glyphoxa, "lore", "add", str(library), expect=2)
    lines = ran.stderr.strip().splitlines()
    assert lines[0].startswith(f"{library / 'broken.json'}:2:13: not valid JSON")
    assert lines[1].startswith(f"{library / 'latin1.txt'}: cannot be read")
    assert lines[2].startswith(f"{library / 'regions' / 'nul.md'}:2:5: a NUL character")
    assert lines[3] == (
        "glyphoxa-mcp: error: 3 of 6 lore files cannot be added (above); nothing was added."
    )
    assert await db256.pool.fetchval("SELECT count(*) FROM lore_documents") == 0


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["add", "missing.md"], "missing.md: no such file or folder."),
        (["add", "{lore}", "--id", "one"], "--id names one document"),
        (["add", "{lore}/rumours.txt", "--known-by", "Nobody"], "--known-by: no entity named"),
    ],
)
def test_bad_arguments_say_what_to_fix(
    glyphoxa: Cli, library: Path, args: list[str], error: str
) -> None:
    filled = [arg.replace("{lore}", str(library)) for arg in args]
    ran = run(glyphoxa, "lore", *filled, expect=2)
    assert error in ran.stderr
