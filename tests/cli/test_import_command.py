from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vtt"


@pytest.mark.slow
def test_a_foundry_world_goes_through_review(glyphoxa: Cli) -> None:
    def cli(*args: str) -> str:
        result = glyphoxa(*args, "--campaign", "salt")
        assert result.returncode == 0, result.stderr
        return result.stdout

    held = json.loads(cli("import", "foundry", str(FIXTURES / "foundry-world.json"), "--json"))
    assert not held["accepted"] and len(held["entities"]) == 10
    assert all(e["action"] == "created" and e["pending_id"] for e in held["entities"])
    assert json.loads(cli("entity", "list", "--json")) == []  # nothing in the graph yet

    queue = json.loads(cli("review", "list", "--json"))["imports"]
    by_name = {p["entity"]["name"]: p["id"] for p in queue if p["entity"]["id"] != "guard-2"}
    cli("review", "confirm", f"import:{by_name['Brannoch']}")
    cli("review", "reject", f"import:{by_name['Salt Law']}")
    [brannoch] = json.loads(cli("entity", "list", "npc", "--json"))
    assert brannoch["attributes"]["inventory"] == ["Ladle of Smiting", "Keg Tap"]

    cli("secret", "mark", "Brannoch")  # the DM hides him, then imports the same world again
    again = json.loads(cli("import", "foundry", str(FIXTURES / "foundry-world.json"), "--json"))
    actions = {e["name"]: e["action"] for e in again["entities"]}
    assert actions["Brannoch"] == "unchanged" and actions["Salt Law"] == "created"
    assert len(json.loads(cli("review", "list", "--json"))["imports"]) == 9  # no duplicates
    accepted = cli("import", "foundry", str(FIXTURES / "foundry-world.json"), "--accept")
    assert "Imported 9 new or changed entities; 1 unchanged." in accepted
    shown = json.loads(cli("entity", "show", "Brannoch", "--json"))["entity"]
    assert shown["visibility"]["secret"] is True  # the import kept the DM's secret


def test_a_roll20_campaign_through_review_and_csv_accepted(glyphoxa: Cli) -> None:
    def cli(*args: str) -> str:
        result = glyphoxa(*args, "--campaign", "salt")
        assert result.returncode == 0, result.stderr
        return result.stdout

    held = cli("import", "roll20", str(FIXTURES / "roll20-campaign.json"))
    assert "5 new or changed entities wait for review" in held
    assert "3 GM notes were not imported" in held
    queue = json.loads(cli("review", "list", "--json"))["imports"]
    [ysolde] = [p["id"] for p in queue if p["entity"]["name"] == "Captain Ysolde"]
    cli("review", "confirm", f"import:{ysolde}")
    assert [e["name"] for e in json.loads(cli("entity", "list", "--json"))] == ["Captain Ysolde"]
    roll20 = cli("import", "roll20", str(FIXTURES / "roll20-campaign.json"), "--accept")
    assert "Imported 4 new or changed entities; 1 unchanged." in roll20
    cli("import", "csv", str(FIXTURES / "entities.csv"), "--accept")
    names = {e["name"] for e in json.loads(cli("entity", "list", "--json"))}
    assert {"Captain Ysolde", "Lyra", "Wanted Poster", "Wendrith", "Tide Sisters"} <= names
    broken = glyphoxa("import", "csv", str(FIXTURES / "broken.csv"))
    assert broken.returncode == 2 and "broken.csv:3:10: type: 'city' is not one of" in broken.stderr


def test_a_foundry_world_nested_too_deep_is_refused_and_nothing_is_held(
    tmp_path: Path, glyphoxa: Cli
) -> None:
    world = tmp_path / "deep.json"
    world.write_text(
        '{"actors": [\n{"name": "Deep", "system": ' + "[" * 50_000 + "]" * 50_000 + "}]}"
    )
    result = glyphoxa("import", "foundry", str(world), "--campaign", "salt")
    assert result.returncode == 2
    assert result.stderr == f"glyphoxa-mcp: error: {world}:2:125: nested deeper than 100 levels.\n"
    assert json.loads(glyphoxa("status", "--json").stdout)["campaigns"] == []


def test_a_csv_with_several_mistakes_is_reported_whole_and_nothing_is_held(
    tmp_path: Path, glyphoxa: Cli
) -> None:
    sheet = tmp_path / "people.csv"
    sheet.write_text("name,type,id\nWendrith,npc,wen\nSaltmere,city,\nTolla,npc,wen\n,npc,\n")
    result = glyphoxa("import", "csv", str(sheet), "--campaign", "salt")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"glyphoxa-mcp: error: {sheet} has 3 problems; nothing was stored:",
        f"{sheet}:3:10: type: 'city' is not one of: npc, player, location, item, faction, event, "
        "quest, concept.",
        f"{sheet}:4:11: id: the id 'wen' is already given on line 2.",
        f"{sheet}:5:1: name: the name is blank.",
    ]
    assert json.loads(glyphoxa("status", "--json").stdout)["campaigns"] == []
