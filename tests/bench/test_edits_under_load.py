"""Entities edited once a second while a FAST, a STANDARD and a DEEP client call the
benchmarked NPC's servers (issue 17): the calls keep their deadlines, and the edited
entities are put back."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.bench import bulk_loader
from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID
from glyphoxa_mcp.bench.edits_under_load import measure_edits_under_load
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.tiers import Tier
from tests.bench.test_dataset import tiny

# Loads a generated dataset with COPY, as the bench does before it measures.
pytestmark = pytest.mark.e2e

ENTITY_STATE = "SELECT id, name, secret FROM entities WHERE campaign_id = $1 ORDER BY id"
VECTORS = "SELECT id, embedding FROM relationships WHERE campaign_id = $1 ORDER BY id"


async def test_calls_of_every_tier_keep_their_deadlines_while_entities_are_edited(
    db256: Database,
) -> None:
    data = tiny()
    await bulk_loader.load(db256.location.dsn, data, lambda _: None)
    before = await db256.pool.fetch(ENTITY_STATE, CAMPAIGN_ID)
    links = await db256.pool.fetch(VECTORS, CAMPAIGN_ID)
    vectors = [(r["id"], r["embedding"].to_list()) for r in links]
    # The deadlines are the tiers' own but FAST's: three clients in one busy test process
    # pass 150 ms now and then without any edit; the bench itself runs with the real ones.
    result = await measure_edits_under_load(
        db256, data, seconds=3.5, edits_per_second=2, deadlines_ms={Tier.FAST: 1_000}
    )
    assert result.edits >= 5
    assert set(result.edits_by_kind) == {"rename", "touch", "secret"}
    assert [tier.tier for tier in result.tiers] == [Tier.FAST, Tier.STANDARD, Tier.DEEP]
    for tier in result.tiers:
        assert tier.calls > tier.calls_after_edit > 0
        assert tier.p95_after_edit_ms is not None
    assert result.failed_after_edit == 0, result.tiers
    assert await db256.pool.fetch(ENTITY_STATE, CAMPAIGN_ID) == before
    # Renames cleared the renamed entities' relationship vectors; they are back too.
    after = await db256.pool.fetch(VECTORS, CAMPAIGN_ID)
    assert [(r["id"], r["embedding"].to_list()) for r in after] == vectors
