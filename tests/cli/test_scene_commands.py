"""Who knows what, from a DM's terminal: the campaign's knowledge setting, a transcript's
scenes, the scenes changed after play and who heard one line, each applied to what an NPC
reads at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_mcp.campaign.sample import bundled
from tests.cli.conftest import Cli

SCENES = [
    {"scene": {"location": "Red Kettle", "present": ["Brannoch"], "title": "Supper"}},
    {"speaker_id": "p-kael", "speaker_name": "Kael", "timestamp": "2026-03-07T19:00:00Z",
     "text": "Brannoch, we will take the cellar road at midnight."},
    {"speaker_id": "brannoch", "speaker_name": "Brannoch", "npc_id": "brannoch",
     "timestamp": "2026-03-07T19:00:20Z", "text": "Mind the third step down there."},
    {"scene": {"location": "Greywater Crossing", "present": ["Captain Ysolde"]}},
    {"speaker_id": "p-lyra", "speaker_name": "Lyra", "timestamp": "2026-03-07T20:00:00Z",
     "text": "Captain, the ferry rope is cut through."},
]  # fmt: skip


@pytest.mark.slow
def test_scenes_from_a_transcript_changed_by_the_dm_and_read_by_npcs(
    tmp_path: Path, glyphoxa: Cli
) -> None:
    def cli(*args: str, expect: int = 0) -> str:
        result = glyphoxa(*args, "--campaign", "demo")
        assert result.returncode == expect, result.stderr
        return result.stdout if expect == 0 else result.stderr

    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(bundled("campaign.yaml"))
    cli("campaign", "load", str(campaign))
    settings = json.loads(cli("campaign", "config", "--json"))
    assert (settings["knowledge"], settings["news_hops"]) == ("witnessed", 1)
    transcript = tmp_path / "night.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in SCENES))
    cli("ingest", str(transcript), "--session", "night")
    scenes = json.loads(cli("session", "scenes", "night", "--json"))
    assert [(s["location_id"], s["present"]) for s in scenes] == [
        ("red-kettle", ["brannoch"]),
        ("greywater-crossing", ["ysolde"]),
    ]
    # Word of the supper reaches Ysolde, who knows Brannoch: she heard of it from him.
    assert ["ysolde", "brannoch"] in scenes[0]["word"]
    assert "heard of by" in cli("session", "scenes", "night")

    lines = json.loads(cli("session", "show", "night", "--json"))
    cellar = next(line["id"] for line in lines if "cellar road" in line["text"])
    assert [line["heard_by"] for line in lines] == [["brannoch"], ["brannoch"], ["ysolde"]]

    # Old Berrit was at the supper too, the DM remembers afterwards.
    changed = json.loads(
        cli(
            "session",
            "scene",
            "night",
            "--at",
            "2026-03-07T19:00:00Z",
            "--present",
            "Brannoch, old berrit",
            "--json",
        )
    )
    assert changed["present"] == ["brannoch", "berrit"]
    assert changed["location_id"] == "red-kettle"  # kept: not given
    heard = json.loads(cli("session", "show", "night", "--json"))
    assert heard[0]["heard_by"] == ["berrit", "brannoch"]
    # And Ysolde overheard the plan.
    cli("session", "heard-by", "night", f"line:{cellar}", "--npcs", "Captain Ysolde, Brannoch")
    assert json.loads(cli("session", "show", "night", "--json"))[0]["heard_by"] == [
        "brannoch",
        "ysolde",
    ]
    cli("session", "heard-by", "night", f"line:{cellar}", "--scene")
    assert json.loads(cli("session", "show", "night", "--json"))[0]["heard_by"] == [
        "berrit",
        "brannoch",
    ]

    # Mistakes are named.
    assert "'Red Kettle' is a location" in cli(
        "session", "heard-by", "night", f"line:{cellar}", "--npcs", "Red Kettle", expect=2
    )
    assert "--at" in cli("session", "scene", "night", "--at", "supper", expect=2)
    assert "no scene starting at" in cli(
        "session", "scene", "night", "--at", "2026-03-07T19:30:00Z", "--remove", expect=2
    )
    assert "is a location" in cli(
        "session",
        "scene",
        "night",
        "--at",
        "2026-03-07T19:30:00Z",
        "--present",
        "Saltmere",
        expect=2,
    )

    # The campaign shared: every NPC hears every line, as campaigns made before scenes.
    shared = cli("campaign", "config", "--knowledge", "shared")
    assert "Knowledge: shared" in shared
    assert {
        tuple(x) if x else None
        for x in (
            line["heard_by"] for line in json.loads(cli("session", "show", "night", "--json"))
        )
    } == {None}
    assert "must be from 0" in cli("campaign", "config", "--news-hops", "9", expect=2)
