"""The rumour rule is the campaign's: one threshold, read by every read of the campaign."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import Provenance
from glyphoxa_mcp.domain.rumours import RumourRule
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View
from tests.storage.graph_fixtures import build_village

COUNT = clamp(10, 10)
DEPTH = clamp(1, 1)


def test_below_the_threshold_and_unconfirmed_is_a_rumour() -> None:
    rule = RumourRule(threshold=0.5)
    assert rule.is_rumour(Provenance(confidence=0.4))
    assert not rule.is_rumour(Provenance(confidence=0.4, dm_confirmed=True))
    assert not rule.is_rumour(Provenance(confidence=0.5))


async def blade_is_unconfirmed(view: View) -> bool:
    found = await view.query_entities(COUNT, DEPTH, name="Grimjaw")
    [owns] = [r for r in found.entities[0].relationships if r.type == "OWNS"]
    return owns.provenance.unconfirmed


async def test_a_campaign_that_lowers_its_threshold_reads_the_claim_as_fact(
    db: Database, memory: CampaignMemory
) -> None:
    await build_village(memory)  # Grimjaw OWNS the Ember Blade at confidence 0.4
    assert await blade_is_unconfirmed(await View.open(memory))
    await Campaigns(db).set_review_threshold("ashfall", 0.3)
    assert not await blade_is_unconfirmed(await View.open(memory))
    assert (await memory.campaign()).review_threshold == 0.3


async def test_a_threshold_outside_zero_to_one_is_refused(
    db: Database, memory: CampaignMemory
) -> None:
    with pytest.raises(InvalidInputError, match="from 0 to 1"):
        await Campaigns(db).set_review_threshold("ashfall", 1.5)
    assert (await memory.campaign()).review_threshold == 0.7
