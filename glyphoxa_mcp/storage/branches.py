"""The lineage of what-if branches: which campaign was forked from which (sql/026).

A campaign made by `fork_campaign` (storage/forking.py) names its parent, the session it was
forked after (if any) and when. Deleting a parent detaches its branches (sql/026) unless
they are deleted with it (storage/deletion.py), so a link never names a deleted campaign.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.listings import Branch
from glyphoxa_mcp.errors import NotFoundError

SELECT_LINEAGE = """
SELECT id, name, forked_from, forked_at_session, forked_at FROM campaigns ORDER BY id
"""
# Every campaign forked from $1, from its branches, and so on, nearest first.
SELECT_DESCENDANTS = """
WITH RECURSIVE below AS (
    SELECT id, 1 AS depth FROM campaigns WHERE forked_from = $1
    UNION ALL
    SELECT c.id, below.depth + 1 FROM campaigns c JOIN below ON c.forked_from = below.id
)
SELECT id FROM below ORDER BY depth, id
"""


def lineage_tree(campaigns: Sequence[Branch], campaign_id: str) -> Branch:
    """The tree `campaign_id` belongs to, from its oldest ancestor down. (pure)

    `campaigns`: every campaign, without children. A link to a campaign not among them
    (deleted outside `delete_campaign`) ends the walk up there."""
    by_id = {campaign.id: campaign for campaign in campaigns}
    if campaign_id not in by_id:
        raise NotFoundError(
            f"No campaign {campaign_id!r}. `glyphoxa-mcp status` lists the campaigns."
        )
    children: dict[str, list[str]] = {}
    for campaign in campaigns:
        if campaign.forked_from in by_id:
            children.setdefault(campaign.forked_from, []).append(campaign.id)
    root = campaign_id
    while (parent := by_id[root].forked_from) is not None and parent in by_id:
        root = parent

    def grown(node_id: str) -> Branch:
        kids = tuple(grown(child) for child in sorted(children.get(node_id, ())))
        return by_id[node_id].model_copy(update={"children": kids})

    return grown(root)


async def branch_tree(db: Database, campaign_id: str) -> Branch:
    """The lineage `campaign_id` belongs to: its oldest ancestor, and every branch below."""
    with driver_errors("read the campaigns' lineage"):
        rows = await db.pool.fetch(SELECT_LINEAGE)
    return lineage_tree([Branch(**dict(row)) for row in rows], campaign_id)


async def descendants(conn: asyncpg.Connection, campaign_id: str) -> list[str]:
    """The campaign's branches, theirs, and so on, nearest first."""
    return [row["id"] for row in await conn.fetch(SELECT_DESCENDANTS, campaign_id)]
