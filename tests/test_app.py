"""The application's start: what it tells the DM before serving."""

from __future__ import annotations

import logging

import pytest

from glyphoxa_mcp.app import App
from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.config import Settings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.pipeline.fact_embedding import embed_missing
from glyphoxa_mcp.providers.embeddings import offline_embedder


async def test_warming_up_says_when_facts_wait_for_a_vector_and_not_after_the_backfill(
    db256: Database, caplog: pytest.LogCaptureFixture
) -> None:
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db256, file, "demo")  # no embedder: as an older database has them
    app = App(Settings(), db256, offline_embedder(db256.embedding_dim), chat=None)
    with caplog.at_level(logging.WARNING, logger="glyphoxa_mcp.app"):
        await app.warm_up()
    assert "9 facts and 28 relationships have no vector yet" in caplog.text
    assert "backfill-embeddings" in caplog.text

    await embed_missing(db256, app.embedder)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="glyphoxa_mcp.app"):
        await app.warm_up()
    assert caplog.text == ""
