from __future__ import annotations

from importlib import resources

import pytest

from glyphoxa_mcp.campaign.file_format import CampaignFile
from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.status import database_status

SAMPLE = resources.files("glyphoxa_mcp").joinpath("data", "demo", "campaign.json").read_text()


async def test_the_sample_campaign_loads_and_loading_again_changes_nothing(db: Database) -> None:
    file = CampaignFile.model_validate_json(SAMPLE)
    memory = CampaignMemory(db, "demo")
    first = await load_campaign(memory, Campaigns(db), file)
    counts = (await database_status(db)).campaigns
    await load_campaign(memory, Campaigns(db), file)
    assert (await database_status(db)).campaigns == counts
    assert (first.entities, first.relationships, first.facts) == (13, 11, 5)
    knives = await memory.graph.get_entity("salt-knives")
    assert knives.visibility.secret and knives.visibility.known_by == ("berrit",)
    [debt] = [f for f in await memory.graph.facts_about("brannoch")]
    assert debt.provenance.confidence == 0.5 and not debt.provenance.dm_confirmed


async def test_an_unknown_reference_refuses_the_whole_file(db: Database) -> None:
    file = CampaignFile.model_validate_json(
        SAMPLE.replace('"target": "Lantern of Osk"', '"target": "Lantern of Oks"')
    )
    with pytest.raises(
        InvalidInputError,
        match=r"relationships\[5\].target: no entity named "
        r"'Lantern of Oks'. Did you mean Lantern of Osk",
    ):
        await load_campaign(CampaignMemory(db, "demo"), Campaigns(db), file)
    assert (await database_status(db)).campaigns == ()
