from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from glyphoxa_mcp.campaign.file_format import CampaignFile
from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.problems import FileProblems
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.status import database_status

SAMPLE = resources.files("glyphoxa_mcp").joinpath("data", "demo", "campaign.yaml").read_text()


def sample(text: str = SAMPLE) -> CampaignFile:
    return parse_campaign_file(text, "campaign.yaml")


async def test_loading_again_changes_nothing_not_even_timestamps(db: Database) -> None:
    first = await load_campaign(db, sample())
    assert (
        first.count("entity", "created"),
        first.count("relationship", "created"),
        first.count("fact", "created"),
    ) == (31, 26, 9)
    memory = CampaignMemory(db, "demo")
    before = await memory.graph.all_relationships()
    counts = (await database_status(db)).campaigns
    again = await load_campaign(db, sample())
    assert {c.action for c in again.changes} == {"unchanged"}
    assert (await database_status(db)).campaigns == counts
    assert await memory.graph.all_relationships() == before
    knives = await memory.graph.get_entity("salt-knives")
    assert knives.visibility.secret and knives.visibility.known_by == ("berrit", "dovrek")
    [debt] = await memory.graph.facts_about("brannoch")
    assert debt.provenance.confidence == 0.5 and not debt.provenance.dm_confirmed


async def test_an_edited_file_updates_in_place_and_says_what_changed(db: Database) -> None:
    await load_campaign(db, sample())
    edited = SAMPLE.replace("occupation: fisherman", "occupation: ferryman").replace(
        "target: Brannoch, confidence: 0.6", "target: Brannoch, confidence: 0.9"
    )
    report = await load_campaign(db, sample(edited))
    changed = [(c.kind, c.label) for c in report.changes if c.action == "updated"]
    assert changed == [("entity", "Old Berrit"), ("relationship", "ysolde KNOWS brannoch")]
    berrit = await CampaignMemory(db, "demo").graph.get_entity("berrit")
    assert berrit.attributes["occupation"] == "ferryman"


async def test_a_dry_run_reports_and_writes_nothing(db: Database) -> None:
    report = await load_campaign(db, sample(), dry_run=True)
    assert report.dry_run and report.count("entity", "created") == 31
    assert (await database_status(db)).campaigns == ()


async def test_an_unknown_reference_refuses_the_whole_file(db: Database) -> None:
    broken = SAMPLE.replace("target: Lantern of Osk}", "target: Lantern of Oks}")
    with pytest.raises(
        InvalidInputError,
        match=r"relationships\[7\].target: no entity named "
        r"'Lantern of Oks'. Did you mean Lantern of Osk",
    ):
        await load_campaign(db, sample(broken))
    assert (await database_status(db)).campaigns == ()


async def test_the_campaign_comes_from_the_file_or_the_command(db: Database) -> None:
    bare = "entities:\n  - {name: Ana, type: npc}\n"
    with pytest.raises(InvalidInputError, match="Name the campaign"):
        await load_campaign(db, sample(bare))
    assert (await load_campaign(db, sample(bare), "mine")).campaign_id == "mine"
    with pytest.raises(InvalidInputError, match="file is for campaign 'demo'"):
        await load_campaign(db, sample(), "mine")


MARSH_YAML = """\
campaign: {id: marsh, name: The Marsh}
relationship_types: [sworn to, owes-a-debt!]
entities:
  - {name: Mirewatch, type: location}
  - {name: Old Hesk, type: npc, known_by: [Mirewatch]}
  - {name: Tolla, type: dragon}
  - {name: Mirewatch, type: location}
  - {name: Brin, type: npc, colour: red}
  - {name: Ketter, type: npc, type: player}
relationships:
  - {source: Old Hesk, type: lives in, target: Mirewach}
  - {source: Tolla, type: KNOWS, target: Old Hesk}
  - {source: Old Hesk, type: sworn to, target: Ferryman}
  - {source: Old Hesk, type: SWORN_TO, target: Ferryman}
  - {source: Ketter, type: LOCATED_AT, target: Mirewatch, known_by: [Hesk, Ferryman]}
  - {source: Brin, type: OWES, target: Old Hesk, confidence: 3}
facts:
  - {subject: Old Hesk, text: Hesk fears the bog., confidence: 2}
  - {subject: Old Hask, text: Hesk owes the ferryman.}
  - {subject: Ferryman, text: The ferry sinks at dusk.}
  - {subject: ferryman, text: The ferry sinks at dusk.}
"""
# Where each mistake is, what it is in, and what the rule says.
MARSH_YAML_PROBLEMS = [
    (2, 32, "relationship_types[1]", "'owes-a-debt!' is not a relationship type"),
    (5, 44, "entities[1].known_by[0]", "'Mirewatch' is a location: known_by names the NPCs"),
    (6, 25, "entities[2].type", "Input should be 'npc', 'player'"),
    (
        7,
        12,
        "entities[3].name",
        "id 'mirewatch' (made from its name) is already in the file at line 4 (entities[0])",
    ),
    (8, 37, "entities[4].colour", "Extra inputs are not permitted"),
    (9, 31, "entities[5].type", "the key 'type' is given twice"),
    (
        11,
        30,
        "relationships[0].type",
        "'lives in' (LIVES_IN) is neither a built-in relationship type",
    ),
    (11, 48, "relationships[0].target", "no entity named 'Mirewach'. Did you mean Mirewatch?"),
    (14, 5, "relationships[3]", "already in the file at line 13 (relationships[2])"),
    (15, 70, "relationships[4].known_by[0]", "no entity named 'Hesk'. Did you mean Old Hesk?"),
    (16, 26, "relationships[5].type", "'OWES' (OWES) is neither a built-in"),
    (16, 62, "relationships[5].confidence", "less than or equal to 1"),
    (18, 64, "facts[0].confidence", "less than or equal to 1"),
    (19, 15, "facts[1].subject", "no entity named 'Old Hask'. Did you mean Old Hesk?"),
    (21, 31, "facts[3].text", "already in the file at line 20 (facts[2])"),
]

# JSON, indented with tabs as some editors write it.
MARSH_JSON = """\
{
\t"campaign": {"id": "marsh", "name": "The Marsh"},
\t"entities": [
\t\t{"name": "Mirewatch", "type": "location"},
\t\t{"name": "Old Hesk", "type": "npc", "known_by": ["Mirewatch"]},
\t\t{"name": "Tolla", "type": "dragon"},
\t\t{"name": "Old Hesk", "type": "npc", "id": "old-hesk"}
\t],
\t"relationships": [
\t\t{"source": "Old Hesk", "type": "lives in", "target": "Mirewach"},
\t\t{"source": "Tolla", "type": "KNOWS", "target": "Ferryman", "known_by": ["Mirewatch"]}
\t],
\t"facts": [
\t\t{"subject": "Old Hask", "text": "Hesk owes the ferryman.", "story_day": "soon"}
\t]
}
"""
MARSH_JSON_PROBLEMS = [
    (5, 52, "entities[1].known_by[0]", "'Mirewatch' is a location: known_by names the NPCs"),
    (6, 29, "entities[2].type", "Input should be 'npc', 'player'"),
    (7, 45, "entities[3].id", "the id 'old-hesk' is already in the file at line 5 (entities[1])"),
    (10, 34, "relationships[0].type", "'lives in' (LIVES_IN) is neither a built-in"),
    (10, 56, "relationships[0].target", "no entity named 'Mirewach'. Did you mean Mirewatch?"),
    (11, 75, "relationships[1].known_by[0]", "'Mirewatch' is a location"),
    (14, 15, "facts[0].subject", "no entity named 'Old Hask'. Did you mean Old Hesk?"),
    (14, 75, "facts[0].story_day", "Input should be a valid number"),
]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("marsh.yaml", MARSH_YAML, MARSH_YAML_PROBLEMS),
        ("marsh.json", MARSH_JSON, MARSH_JSON_PROBLEMS),
    ],
    ids=["yaml", "json"],
)
async def test_every_mistake_of_a_file_is_reported_at_its_place_in_one_run(
    db: Database, name: str, text: str, expected: list[tuple[int, int, str, str]]
) -> None:
    # A name the file uses may be one stored before, by an earlier file or a command.
    await load_campaign(db, sample("entities:\n  - {name: Ferryman, type: npc}\n"), "marsh")
    stored = (await database_status(db)).campaigns
    with pytest.raises(FileProblems) as caught:
        await load_campaign(db, parse_campaign_file(text, name))
    found = caught.value.problems
    assert [(p.line, p.column, p.field) for p in found] == [e[:3] for e in expected]
    for problem, (*_, rule) in zip(found, expected, strict=True):
        assert rule in problem.rule, problem
    lines = str(caught.value).splitlines()
    assert lines[0] == f"{name} has {len(expected)} problems; nothing was stored:"
    assert lines[1].startswith(f"{name}:{expected[0][0]}:{expected[0][1]}: {expected[0][2]}: ")
    assert (await database_status(db)).campaigns == stored


async def test_a_type_the_file_declares_is_loaded_and_an_undeclared_one_is_not(
    db: Database,
) -> None:
    text = (
        "entities:\n  - {name: Hesk, type: npc}\n  - {name: Tolla, type: npc}\n"
        "relationships:\n  - {source: Hesk, type: sworn to, target: Tolla}\n"
    )
    with pytest.raises(FileProblems, match=r"f.yaml:5:26: relationships\[0\].type: 'sworn to'"):
        await load_campaign(db, parse_campaign_file(text, "f.yaml"), "marsh")
    declared = "relationship_types: [SWORN_TO]\n" + text
    report = await load_campaign(db, parse_campaign_file(declared, "f.yaml"), "marsh")
    assert [c.label for c in report.changes if c.kind == "relationship"] == ["hesk SWORN_TO tolla"]
    # a near miss of a built-in type is named
    typo = text.replace("sworn to", "located_ta")
    with pytest.raises(FileProblems, match=r"Did you mean LOCATED_AT\?"):
        await load_campaign(db, parse_campaign_file(typo, "f.yaml"), "marsh")


async def test_a_relationship_that_holds_both_ways_is_listed_once(db: Database) -> None:
    text = (
        "entities:\n  - {name: Hesk, type: npc}\n  - {name: Tolla, type: npc}\n"
        "relationships:\n  - {source: Hesk, type: allied with, target: Tolla}\n"
        "  - {source: Tolla, type: ALLIED_WITH, target: Hesk}\n"
    )
    with pytest.raises(FileProblems, match=r"f.yaml:6:5: relationships\[1\]: This relationship"):
        await load_campaign(db, parse_campaign_file(text, "f.yaml"), "marsh")


async def test_counts_add_up_to_the_entities_the_file_holds(db: Database) -> None:
    await load_campaign(db, sample())
    edited = SAMPLE.replace("occupation: fisherman", "occupation: ferryman").replace(
        "entities:\n", "entities:\n  - {name: Tamsin Reed, type: player}\n", 1
    )
    report = await load_campaign(db, sample(edited), dry_run=True)
    counts = [report.count("entity", action) for action in ("created", "updated", "unchanged")]
    assert counts == [1, 1, 30] and sum(counts) == len(sample(edited).entities) == 32
    twice = SAMPLE.replace("entities:\n", "entities:\n  - {name: Old Berrit, type: npc}\n", 1)
    with pytest.raises(FileProblems) as caught:
        await load_campaign(db, sample(twice), dry_run=True)
    # reported where it is listed again, not at each of the many places that name it
    assert str(caught.value) == (
        "campaign.yaml:33:11: entities[3].name: An entity named 'Old Berrit' is already in the "
        "file at line 16 (entities[0]): each is listed once."
    )


async def test_the_guide_shows_what_a_load_of_its_example_reports(db: Database) -> None:
    guide = (
        Path(__file__).resolve().parents[2] / "docs" / "guide" / "campaign-files.md"
    ).read_text()
    section = guide[guide.index("### What is checked") :]
    example = section[section.index("```yaml\n") + 8 : section.index("```\n")]
    shown = section[section.index("```text\n") + 8 :]
    shown = shown[: shown.index("```\n")]
    with pytest.raises(FileProblems) as caught:
        await load_campaign(db, parse_campaign_file(example, "marsh.yaml"))
    assert f"glyphoxa-mcp: error: {caught.value}\n" == shown
