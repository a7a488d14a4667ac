from __future__ import annotations

from importlib import resources

import pytest

from glyphoxa_mcp.campaign.file_format import CampaignFile
from glyphoxa_mcp.campaign.loader import load_campaign
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
