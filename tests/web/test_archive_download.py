"""The desk offers the campaign's archive for download (web/routes/archive.py)."""

from __future__ import annotations

import gzip
import json

from glyphoxa_mcp.desk.archive_actions import export_campaign
from tests.web.conftest import DeskClient


async def test_the_review_page_offers_the_archive_and_it_downloads(desk: DeskClient) -> None:
    review = await desk.get("/c/demo/review")
    assert 'href="/c/demo/export" download' in review.text

    download = await desk.get("/c/demo/export")

    assert download.status_code == 200
    assert download.headers["content-type"] == "application/gzip"
    assert download.headers["content-disposition"] == (
        'attachment; filename="demo.glyphoxa.jsonl.gz"'
    )
    header = json.loads(gzip.decompress(download.content).splitlines()[0])
    assert header["campaign"] == "demo" and header["format"] == "glyphoxa-campaign"
    # The same file as `campaign export` writes.
    assert download.content == b"".join([p async for p in export_campaign(desk.db, "demo")])


async def test_no_archive_of_a_campaign_that_is_not_there(desk: DeskClient) -> None:
    missing = await desk.get("/c/nowhere/export")
    assert missing.status_code == 404
