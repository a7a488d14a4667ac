from __future__ import annotations

import pytest

from glyphoxa_mcp.campaign.file_format import CampaignFile
from glyphoxa_mcp.campaign.problems import refuse
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.errors import InvalidInputError

GOOD = """\
campaign: {id: coast, name: The Coast}
entities:
  - name: Grimjaw
    type: npc
    aliases: [the smith]
    attributes: {mood: {morning: grumpy}}
    known_by: [Grimjaw]
relationships:
  - {source: Grimjaw, type: located at, target: Saltmere}
facts:
  - {subject: Grimjaw, text: Grimjaw hates rain., story_day: 3, secret: true}
"""


def read_whole(text: str) -> CampaignFile:
    """The file, or what reading it found wrong (the rest is checked when it is loaded)."""
    file = parse_campaign_file(text, "coast.yaml")
    refuse(file.source, file.read_problems)
    return file


def test_a_good_file_parses_with_nested_attributes() -> None:
    file = parse_campaign_file(GOOD, "coast.yaml")
    assert file.campaign is not None and file.campaign.id == "coast"
    [grimjaw] = file.entities
    assert grimjaw.attributes == {"mood": {"morning": "grumpy"}}
    assert file.facts[0].secret and file.facts[0].story_day == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            GOOD.replace("type: npc", "type: dragon"),
            "coast.yaml:4:11: entities[0].type: Input should be",
        ),
        (GOOD.replace("story_day: 3", "story_day: soon"), "coast.yaml:11:62: facts[0].story_day:"),
        (GOOD.replace("    type: npc\n", ""), "coast.yaml:3:5: entities[0].type: Field required"),
        (GOOD + "villains: []\n", "coast.yaml:12:11: villains: Extra inputs are not permitted"),
        (GOOD.replace("[the smith]", "[the smith"), "coast.yaml:6:15: not valid YAML"),
        ("", "coast.yaml: the file is empty"),
    ],
)
def test_errors_name_file_line_column_and_field(text: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        read_whole(text)
    assert str(caught.value).startswith(message), str(caught.value)


def test_aliases_merge_keys_and_dates_read_as_a_dm_means_them() -> None:
    text = GOOD.replace("type: npc", "type: npc\n    <<: &shared {secret: true}") + (
        "  - {subject: Grimjaw, text: Born then., story_label: 1492-05-01, <<: *shared}\n"
    )
    file = parse_campaign_file(text, "coast.yaml")
    assert file.entities[0].secret and file.facts[1].secret
    assert file.facts[1].story_label == "1492-05-01"  # text, as JSON stores it


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("facts: " + "[" * 101 + "]" * 101, "coast.yaml:1:107: values nested deeper than 100"),
        ("facts: [{text: !!binary aGk=}]", "coast.yaml:1:16: the tag !!binary is not allowed"),
        ("facts: [{text: !!int ten}]", "coast.yaml:1:16: not valid YAML ('ten' is not a !!int)"),
        ("facts: [&f {text: *f}]", "coast.yaml:1:19: the alias *f is inside the value it names"),
    ],
)
def test_a_file_out_of_bounds_is_refused_at_its_place(text: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_campaign_file(text, "coast.yaml")
    assert str(caught.value).startswith(message), str(caught.value)


def test_entries_that_break_a_rule_are_left_out_and_each_problem_kept() -> None:
    text = GOOD.replace("type: npc", "type: dragon\n    name: Grim") + (
        "  - {subject: Grimjaw, text: Wet., confidence: 7}\n"
        "  - {subject: Grimjaw, text: Dry., confidence: 1, confidence: 0.5}\n"
    )
    file = parse_campaign_file(text, "coast.yaml")
    found = sorted(file.read_problems, key=lambda p: (p.line or 0, p.column or 0))
    assert [str(p) for p in found] == [
        "coast.yaml:4:11: entities[0].type: Input should be 'npc', 'player', 'location', "
        "'item', 'faction', 'event', 'quest' or 'concept'",
        "coast.yaml:5:5: entities[0].name: the key 'name' is given twice in this mapping.",
        "coast.yaml:13:48: facts[1].confidence: Input should be less than or equal to 1",
        "coast.yaml:14:51: facts[2].confidence: the key 'confidence' is given twice in this "
        "mapping.",
    ]
    assert [f.text for f in file.facts] == ["Grimjaw hates rain.", "Dry."]
    assert file.entities == () and file.is_unchecked("grim")
    # positions are as written, though an entry before them was left out
    assert str(file.problem(("facts", 1, "text"), "x")) == "coast.yaml:14:30: facts[2].text: x"


def test_json_indented_with_tabs_reads_with_its_columns() -> None:
    text = '{\n\t"entities": [\n\t\t{"name": "Ana", "type": "elf"}\n\t]\n}\n'
    file = parse_campaign_file(text, "coast.json")
    assert [str(p) for p in file.read_problems] == [
        "coast.json:3:27: entities[0].type: Input should be 'npc', 'player', 'location', "
        "'item', 'faction', 'event', 'quest' or 'concept'"
    ]
