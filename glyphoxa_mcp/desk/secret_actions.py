"""Secrets and who knows them: an entity, relationship or fact made secret (known by some
NPCs, or by the DM alone) or common knowledge, and transcript lines or whole sessions kept to
the DM (pipeline/dm_only.py says what follows them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.models import Visibility
from glyphoxa_mcp.domain.reports import LinesMarked, SessionMarked
from glyphoxa_mcp.pipeline.dm_only import mark_lines, mark_session

SecretKind = Literal["entity", "relationship", "fact"]


async def set_visibility(
    desk: CampaignDesk, kind: SecretKind, item_id: str | int, visibility: Visibility
) -> None:
    """Who may know the entity (its id), relationship or fact (their numbers)."""
    await desk.memory.curation.set_visibility(kind, item_id, visibility)


async def keep_lines_to_dm(
    desk: CampaignDesk, entry_ids: Sequence[int], dm_only: bool
) -> LinesMarked:
    """Transcript lines kept to the DM (or shown to NPCs again); ended sessions' summaries
    are written again from the lines every viewer may read."""
    return await mark_lines(desk.db, desk.campaign_id, entry_ids, dm_only)


async def keep_session_to_dm(desk: CampaignDesk, session_id: str, dm_only: bool) -> SessionMarked:
    """A whole session kept to the DM, with its episode and what it taught (or readable by
    NPCs again: its episode shown, what it taught left secret)."""
    return await mark_session(desk.db, desk.campaign_id, session_id, dm_only)
