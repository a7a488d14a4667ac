"""The DM's commands as a DM runs them, tables or --json (in process: see tests/cli/runner.py)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.cli.conftest import Cli
from tests.cli.runner import Ran

Runner = Callable[..., Ran]


@pytest.fixture
def dm(glyphoxa: Cli) -> Runner:
    def run(*args: str, expect: int = 0) -> Ran:
        result = glyphoxa(*args, "--campaign", "coast")
        assert result.returncode == expect, result.stderr
        assert "Traceback" not in result.stderr
        return result

    return run


@pytest.mark.slow
def test_a_dm_builds_reviews_and_corrects_the_graph(dm: Runner) -> None:
    dm("entity", "add", "Grimjaw", "npc", "--attr", "age=52", "--alias", "the smith")
    dm("entity", "add", "Red Kettle", "location")
    dm("entity", "add", "Vask", "npc", "--secret")
    dm("relate", "the smith", "LOCATED_AT", "Red Kettle")
    dm("relate", "Grimjaw", "knows", "Vask", "--confidence", "0.4")
    added = json.loads(
        dm(
            "fact",
            "add",
            "Grimjaw",
            "Grimjaw owes forty silver.",
            "--when",
            "day 12",
            "--confidence",
            "0.5",
            "--json",
        ).stdout
    )
    assert added["story_day"] == 12 and added["provenance"]["dm_confirmed"] is False

    listing = json.loads(dm("entity", "list", "npc", "--json").stdout)
    assert [(e["id"], e["attributes"]) for e in listing] == [("grimjaw", {"age": 52}), ("vask", {})]
    queue = json.loads(dm("review", "list", "--json").stdout)
    assert len(queue["relationships"]) == 1 and len(queue["facts"]) == 1
    rel_id = queue["relationships"][0]["id"]
    dm("review", "confirm", f"rel:{rel_id}")
    dm("review", "reject", f"fact:{added['id']}")
    assert "Nothing waits for review" in dm("review", "list").stdout

    fact = json.loads(dm("fact", "add", "Grimjaw", "Grimjaw forged the gate.", "--json").stdout)
    new = json.loads(
        dm("fact", "retcon", f"fact:{fact['id']}", "Grimjaw forged the bell.", "--json").stdout
    )
    history = json.loads(dm("fact", "history", f"fact:{new['id']}", "--json").stdout)
    assert [f["text"] for f in history] == ["Grimjaw forged the gate.", "Grimjaw forged the bell."]
    shown = dm("entity", "show", "the smith").stdout
    assert "Grimjaw forged the bell." in shown and "forged the gate" not in shown

    dm(
        "entity",
        "edit",
        "Grimjaw",
        "--rename",
        "Grimjaw Ironhand",
        "--unset",
        "age",
        "--attr",
        "mood=grumpy",
    )
    edited = json.loads(dm("entity", "show", "grimjaw", "--json").stdout)["entity"]
    assert edited["name"] == "Grimjaw Ironhand" and edited["attributes"] == {"mood": "grumpy"}
    dm("entity", "remove", "Vask", "--yes")
    assert [e["id"] for e in json.loads(dm("entity", "list", "--json").stdout)] == [
        "grimjaw",
        "red-kettle",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("entity", "add", "Saltmere", "city"), "Unknown type 'city'; use one of: npc, player"),
        (("relate", "Grimjaw", "KNOWS", "Grimjw"), "Did you mean Grimjaw"),
        (("relate", "Grimjaw", "!!", "Red Kettle"), "TYPE '!!' is not a relationship type"),
        (("fact", "add", "Grimjaw", "x", "--when", "someday"), "--when 'someday' is not"),
        (("entity", "add", "Ana", "npc", "--attr", "oops"), "--attr 'oops': write it as key=value"),
        (("review", "confirm", "rel:999"), "No relationship 999"),
        (("secret", "mark", "fact:x"), "the id after fact: is a number"),
        (("entity", "remove", "Grimjaw"), "needs --yes"),
        (("secret", "mark", "import:3"), "`review confirm` it first"),
    ],
)
def test_bad_input_names_the_problem(dm: Runner, args: tuple[str, ...], message: str) -> None:
    dm("entity", "add", "Grimjaw", "npc")
    dm("entity", "add", "Red Kettle", "location")
    assert message in dm(*args, expect=2).stderr


def test_an_ambiguous_name_asks_for_the_id(dm: Runner) -> None:
    dm("entity", "add", "Guard", "npc")
    dm("entity", "add", "Guard", "npc", "--id", "guard-2")
    error = dm("entity", "show", "guard ", expect=2).stderr
    assert "could be Guard (npc, id guard); Guard (npc, id guard-2). Use the id." in error
    assert "guard-2" in dm("entity", "show", "guard-2").stdout


def test_without_campaign_a_command_uses_the_only_one_and_says_so_or_lists_them(
    glyphoxa: Cli,
) -> None:
    none = glyphoxa("entity", "list")
    assert none.returncode == 2 and "There is no campaign yet." in none.stderr
    assert "campaign load FILE --campaign ID" in none.stderr
    assert glyphoxa("entity", "add", "Grimjaw", "npc").returncode == 2
    assert json.loads(glyphoxa("status", "--json").stdout)["campaigns"] == []

    assert glyphoxa("entity", "add", "Grimjaw", "npc", "--campaign", "coast").returncode == 0
    only = glyphoxa("entity", "list")
    assert only.returncode == 0 and "Grimjaw" in only.stdout
    assert "Campaign 'coast', the only one in this database" in only.stderr

    assert glyphoxa("entity", "add", "Vask", "npc", "--campaign", "ashfall").returncode == 0
    several = glyphoxa("entity", "list")
    assert several.returncode == 2 and several.stdout == ""
    assert "--campaign: this database holds 2 campaigns (ashfall, coast)" in several.stderr
    chosen = glyphoxa("entity", "list", env={"GLYPHOXA_CAMPAIGN": "ashfall"})
    assert "Vask" in chosen.stdout and "Grimjaw" not in chosen.stdout
