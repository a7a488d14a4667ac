"""The desk at 10,000 entities: the list is a page at a time, and search finds one of them."""

from __future__ import annotations

import html

from glyphoxa_mcp.db.database import Database
from tests.web.conftest import DeskClient

ENTITIES = 10_000
SEED = """
INSERT INTO entities (campaign_id, id, type, name, aliases)
SELECT 'demo', 'crowd-' || n, 'npc', 'Crowd Member ' || lpad(n::text, 5, '0'),
       ARRAY['the ' || n || ' of Saltmere']
FROM generate_series(1, $1) AS n
"""


async def seed_crowd(db: Database) -> int:
    await db.pool.execute(SEED, ENTITIES)
    return int(await db.pool.fetchval("SELECT count(*) FROM entities WHERE campaign_id = 'demo'"))


async def test_ten_thousand_entities_are_listed_a_page_at_a_time_and_found_by_search(
    desk: DeskClient,
) -> None:
    total = await seed_crowd(desk.db)

    first = html.unescape((await desk.get("/c/demo/entities")).text)
    later = html.unescape((await desk.get("/c/demo/entities", params={"page": 3})).text)
    by_name = html.unescape((await desk.get("/c/demo/entities", params={"q": "member 07777"})).text)
    by_alias = html.unescape(
        (await desk.get("/c/demo/entities", params={"q": "the 7777 of", "type": "npc"})).text
    )

    pages = -(-total // 50)
    assert f"1-50 of {total} entities" in first
    assert f"Page 1 of {pages}" in first
    assert first.count('<a href="/c/demo/entities/') == 50
    assert 'href="/c/demo/entities?page=2">Next</a>' in first
    assert f'href="/c/demo/entities?page={pages}">Last</a>' in first
    assert f"101-150 of {total} entities" in later
    assert 'href="/c/demo/entities?page=2">Previous</a>' in later
    for found in (by_name, by_alias):
        assert "1-1 of 1 entities" in found
        assert '<a href="/c/demo/entities/crowd-7777">Crowd Member 07777</a>' in found
