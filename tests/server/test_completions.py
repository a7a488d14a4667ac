"""Completions of the resource templates' arguments: the campaign's NPCs and sessions as the
user types, within the server's viewer's scope."""

from __future__ import annotations

from mcp.types import ResourceTemplateReference

from glyphoxa_mcp.domain.models import NewSession
from glyphoxa_mcp.server.completions import MAX_VALUES, starting_with
from glyphoxa_mcp.server.resource_uris import HOT_URI_TEMPLATE, PREFETCH_URI_TEMPLATE
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.server.conftest import Connect
from tests.storage.graph_fixtures import build_village

HOT = ResourceTemplateReference(type="ref/resource", uri=HOT_URI_TEMPLATE)


async def test_the_dm_is_offered_every_npc_that_starts_with_what_was_typed(
    memory: CampaignMemory, connect: Connect
) -> None:
    await build_village(memory)
    async with connect() as client:
        everyone = await client.complete(HOT, {"name": "npc_id", "value": ""})
        typed = await client.complete(HOT, {"name": "npc_id", "value": "GR"})
    assert {"grimjaw", "mira", "vask"} <= set(everyone.completion.values)
    assert typed.completion.values == ["grimjaw"]


async def test_an_npc_is_offered_only_itself(memory: CampaignMemory, connect: Connect) -> None:
    await build_village(memory)
    async with connect(npc_id="mira") as client:
        offered = await client.complete(HOT, {"name": "npc_id", "value": ""})
        prefetch = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri=PREFETCH_URI_TEMPLATE),
            {"name": "npc_id", "value": "g"},
        )
    assert offered.completion.values == ["mira"]
    assert prefetch.completion.values == []


async def test_sessions_are_offered_latest_first(memory: CampaignMemory, connect: Connect) -> None:
    await memory.sessions.upsert(NewSession(id="s2", title="The Crossing"))
    async with connect() as client:
        offered = await client.complete(HOT, {"name": "session", "value": "s"})
        unknown = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="glyphoxa://nowhere/{x}"),
            {"name": "x", "value": ""},
        )
    assert offered.completion.values == ["s2", "s1"]
    assert unknown.completion.values == []


def test_a_long_list_says_there_is_more() -> None:
    offered = starting_with([f"npc-{n}" for n in range(250)], "NPC-1")
    assert len(offered.values) == MAX_VALUES - 0 or offered.total == 111
    assert offered.total == 111 and offered.has_more is True
