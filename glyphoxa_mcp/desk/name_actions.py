"""Which entity a name means, and the campaign's names as lists: for resolving what the DM
typed, for an NPC's speech-to-text vocabulary, and for name correction."""

from __future__ import annotations

from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.models import Entity
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.recall.entity_resolver import EntityResolver
from glyphoxa_mcp.recall.names import match_names
from glyphoxa_mcp.views.view import View

MAX_ENTITIES = 100_000


async def entity_resolver(desk: CampaignDesk) -> EntityResolver:
    """Every entity of the campaign, with its attributes, to resolve a name, alias or id."""
    return EntityResolver(await desk.memory.graph.find_entities(limit=MAX_ENTITIES))


async def name_resolver(desk: CampaignDesk) -> EntityResolver:
    """The same from the memory's cached names (attributes left out): what a long-running
    desk resolves with."""
    return EntityResolver(await desk.memory.known_entities())


async def names_by_id(desk: CampaignDesk) -> dict[str, str]:
    """Each entity's name by its id (from the cached names)."""
    return {e.id: e.name for e in await desk.memory.known_entities()}


async def check_npc(desk: CampaignDesk, npc_id: str) -> None:
    """NotFoundError, with near misses, when no entity has the id `npc_id` (given as --npc)."""
    try:
        await desk.memory.graph.get_entity(npc_id)
    except NotFoundError:
        near = match_names(npc_id, await desk.memory.queries.entity_names(), limit=3)
        hint = f" Did you mean {', '.join(m.entity.id for m in near)}?" if near else ""
        raise NotFoundError(
            f"No entity {npc_id!r} in campaign {desk.campaign_id!r} for --npc.{hint}"
        ) from None


async def speech_terms(desk: CampaignDesk, npc_id: str | None = None) -> list[str]:
    """The names and aliases the viewer (None: the DM) may know, people first: a keyword
    list for a speech-to-text service."""
    if npc_id:
        await check_npc(desk, npc_id)
    return await View(desk.memory, npc_id or None).speech_terms()


async def entity_names(desk: CampaignDesk) -> list[Entity]:
    """Every entity's names (attributes left out), for name correction."""
    return await desk.memory.queries.entity_names()
