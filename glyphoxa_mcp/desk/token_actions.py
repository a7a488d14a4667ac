"""Bearer tokens for the HTTP server and the web desk: one viewer (an NPC, the DM, or a
recorder) of one campaign each. The database keeps only a hash of a token's secret."""

from __future__ import annotations

from datetime import datetime

from glyphoxa_mcp.access import Grant, NewToken
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.desk.name_actions import check_npc
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory


async def create_token(
    db: Database,
    viewer: Viewer,
    max_tier: Tier | None = None,
    label: str | None = None,
    expires_at: datetime | None = None,
) -> tuple[Grant, NewToken]:
    """A token for the viewer of an existing campaign (an NPC's must be an entity of it);
    its secret is in the `NewToken` only, never stored."""
    await Campaigns(db).get(viewer.campaign)
    if viewer.npc_id is not None:
        await check_npc(CampaignDesk(CampaignMemory(db, viewer.campaign)), viewer.npc_id)
    return await AccessTokens(db).create(viewer, max_tier, label, expires_at)


async def list_tokens(db: Database, campaign_id: str | None = None) -> list[Grant]:
    """Every token (of one campaign, if given), without secrets."""
    return await AccessTokens(db).list(campaign_id)


async def revoke_token(db: Database, token_id: str) -> Grant:
    """The token stops working at its next request (open sessions too)."""
    return await AccessTokens(db).revoke(token_id)
