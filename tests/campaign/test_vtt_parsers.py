from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_mcp.campaign.problems import FileProblems
from glyphoxa_mcp.campaign.vtt.common import html_to_text
from glyphoxa_mcp.campaign.vtt.csv_import import parse_csv
from glyphoxa_mcp.campaign.vtt.foundry import parse_foundry
from glyphoxa_mcp.campaign.vtt.roll20 import parse_roll20
from glyphoxa_mcp.errors import InvalidInputError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vtt"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_html_becomes_readable_text() -> None:
    assert html_to_text("<p>Loud &amp; <b>generous</b>.</p><p>Next</p>") == "Loud & generous.\nNext"
    assert html_to_text("Burns.<br>Shows doors.") == "Burns.\nShows doors."
    assert html_to_text(None) == ""


def test_foundry_actors_items_scenes_and_journal() -> None:
    result = parse_foundry(read("foundry-world.json"))
    found = {e.entity.id: e.entity for e in result.entities}
    brannoch = found["brannoch"]
    assert brannoch.type == "npc" and brannoch.attributes["biography"] == (
        "Innkeeper of the Red Kettle. Loud & generous.\nKnows every rumour."
    )
    assert brannoch.attributes["inventory"] == ["Ladle of Smiting", "Keg Tap"]
    assert brannoch.attributes["creature_type"] == "humanoid"
    kael = found["kael"]
    assert kael.type == "player" and kael.attributes["class"] == "Ranger"
    assert kael.attributes["race"] == "Half-Elf"
    assert {found["guard"].name, found["guard-2"].name} == {"Guard"}
    assert found["the-salt-barge"].type == "item"
    assert (
        found["lantern-of-osk"].attributes["description"]
        == "Burns without oil.\nShows hidden doors."
    )
    assert found["red-kettle"].type == "location"  # the scene's navName, not its file name
    assert found["greywater-crossing"].type == "location"
    assert found["the-drowned-prophecy"].attributes["lore_text"] == (
        "Verse\nWhen the bell is silent, the sea takes back the road."
    )
    assert found["salt-law"].attributes["lore_text"].startswith("Whatever washes ashore")
    assert [e.source_ref for e in result.entities][:2] == ["a1b2c3d4e5f6g7h8", "k9l8m7n6o5p4q3r2"]


def test_roll20_characters_and_handouts_leave_gm_notes_out() -> None:
    result = parse_roll20(read("roll20-campaign.json"))
    found = {e.entity.name: e.entity for e in result.entities}
    assert found["Captain Ysolde"].type == "npc"
    assert found["Captain Ysolde"].attributes == {
        "biography": "Captain of the Town Watch. Stern but fair.",
        "alignment": "lawful neutral",
        "npc_type": "Medium humanoid (human), lawful neutral",
    }
    assert found["Lyra"].type == "player" and found["Lyra"].attributes["level"] == 3
    assert found["Old Berrit"].type == "npc"  # controlled by "all" is nobody's character
    assert found["Wanted Poster"].attributes["lore_text"].startswith("Reward: 40 silver")
    assert "Tarquel" not in str([e.entity.attributes for e in result.entities])
    assert result.notes == [
        "3 GM notes were not imported: add what NPCs may know as facts "
        "(fact add ... --secret --known-by ...)."
    ]


def test_csv_rows_become_entities_with_aliases_and_attributes() -> None:
    result = parse_csv(read("entities.csv"))
    wendrith, harbour, sisters = (e.entity for e in result.entities)
    assert wendrith.aliases == ("the harbour master", "Wen")
    assert wendrith.attributes == {"occupation": "harbour master"}
    assert harbour.type == "location" and harbour.attributes["description"].startswith("quays,")
    assert sisters.type == "faction"


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_csv, read("broken.csv"), "entities.csv:3:10: type: 'city' is not one of"),
        (
            parse_csv,
            "name,occupation\nAna,smith\n",
            "entities.csv:1: type: the header needs a 'type'",
        ),
        (parse_csv, 'name,type\n"Ana,npc\n', "entities.csv:2: not valid CSV"),
        (
            parse_csv,
            "name,type\nAna,npc,extra\n",
            "entities.csv:2:9: row: 3 cells, but the header has 2",
        ),
        (parse_foundry, '{"actors": [}', "foundry world:1:13: not valid JSON"),
        (
            parse_foundry,
            '{"actors": {}}',
            "foundry world:1:12: actors: should be a list of documents.",
        ),
        (parse_roll20, "[1, 2", "roll20 campaign:1:6: not valid JSON"),
        (
            parse_foundry,
            '{"actors": [{"name": "Deep", "system": ' + "[" * 100_000 + "]" * 100_000 + "}]}",
            "foundry world:1:137: nested deeper than 100 levels",
        ),
    ],
)
def test_broken_exports_report_where(parse, text: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse(text)
    assert str(caught.value).startswith(message), str(caught.value)


CSV_WITH_MISTAKES = """\
name,type,id,aliases,occupation
Wendrith,npc,wen,Wen,harbour master
Saltmere,city,,,
,npc,,,
Tolla,npc,wen,,
"Brin, the
ferryman",dragon,,,
Ketter,npc,,,smith,extra
Hesk,npc,bad id!,,
Guard,npc,guard,,
Guard,npc,,,
"""


def test_every_mistake_of_a_csv_is_reported_at_its_cell_in_one_run() -> None:
    with pytest.raises(FileProblems) as caught:
        parse_csv(CSV_WITH_MISTAKES, "people.csv")
    assert str(caught.value).splitlines() == [
        "people.csv has 6 problems; nothing was stored:",
        "people.csv:3:10: type: 'city' is not one of: npc, player, location, item, faction, "
        "event, quest, concept.",
        "people.csv:4:1: name: the name is blank.",
        "people.csv:5:11: id: the id 'wen' is already given on line 2.",
        "people.csv:7:11: type: 'dragon' is not one of: npc, player, location, item, faction, "
        "event, quest, concept.",
        "people.csv:8:20: row: 6 cells, but the header has 5.",
        "people.csv:9:10: id: the id 'bad id!' is not an id: letters, digits and _ . : - "
        "(a letter or digit first), at most 128 characters.",
    ]


WORLD_WITH_MISTAKES = """\
{
  "actors": [
    {"_id": "a1", "name": "Brannoch", "type": "npc"},
    {"_id": "a2", "name": "Bad\\u0000Bell", "type": "npc"},
    {"_id": "a3", "name": "Kael", "type": "character"}
  ],
  "items": {"name": "not a list"},
  "scenes": [
    {"_id": "s1", "name": "map-01", "navName": "LONG"},
    {"_id": "s2", "name": "LONG"}
  ],
  "journal": [{"name": "Lore"}, 7, {"pages": [], "name": "More\\u0000Lore"}]
}
""".replace("LONG", "N" * 201)


def test_every_mistake_of_a_foundry_world_is_reported_at_its_place_in_one_run() -> None:
    with pytest.raises(FileProblems) as caught:
        parse_foundry(WORLD_WITH_MISTAKES, "world.json")
    assert str(caught.value).splitlines() == [
        "world.json has 5 problems; nothing was stored:",
        "world.json:4:27: actors[1].name: must not contain NUL characters",
        "world.json:7:12: items: should be a list of documents.",
        "world.json:9:48: scenes[0].navName: String should have at most 200 characters",
        "world.json:10:27: scenes[1].name: String should have at most 200 characters",
        "world.json:12:58: journal[2].name: must not contain NUL characters",
    ]


def test_a_made_id_never_takes_one_the_file_gives() -> None:
    rows = "name,type,id\nGuard,npc,\nGuard,npc,guard\nGuard,npc,guard-2\n"
    assert [e.entity.id for e in parse_csv(rows).entities] == ["guard-3", "guard", "guard-2"]


def test_misshapen_fields_of_an_export_are_skipped_not_fatal() -> None:
    actor = {
        "name": "Odd",
        "type": ["npc"],
        "items": 7,
        "system": {"details": {"biography": {"value": {"html": 1}}}},
    }
    journal = {"name": "Lore", "pages": None, "content": ["not", "html"]}
    result = parse_foundry(json.dumps({"actors": [actor], "journal": [journal]}))
    assert [(e.entity.name, e.entity.attributes) for e in result.entities] == [
        ("Odd", {}),
        ("Lore", {}),
    ]
    assert html_to_text(42) == ""
