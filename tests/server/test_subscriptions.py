"""Subscribers hear when an NPC's hot context changes, through PostgreSQL's change feed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from glyphoxa_mcp.db.change_feed import Change, listening
from glyphoxa_mcp.domain.models import NewEntry, NewFact
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import unhurried
from tests.server.conftest import Connect
from tests.storage.graph_fixtures import build_village

HOT = "glyphoxa://npc/grimjaw/hot"


def line(text: str) -> NewEntry:
    return NewEntry(
        speaker_id="mira",
        speaker_name="Mira",
        text=text,
        spoken_at=datetime(2026, 3, 1, 20, tzinfo=UTC),
    )


@pytest.fixture
async def village(memory: CampaignMemory) -> CampaignMemory:
    await build_village(memory)
    return memory


def make_server(memory: CampaignMemory) -> tuple[Any, HotSubscriptions]:
    subscriptions = HotSubscriptions(memory)
    state = ServerState(View(memory), unhurried(Tier.STANDARD))
    return build_server(state, subscriptions=subscriptions), subscriptions


async def test_the_database_reports_transcript_and_graph_changes(
    village: CampaignMemory, db_dsn: str
) -> None:
    seen: list[Change] = []
    got_two = anyio.Event()

    async def record(change: Change) -> None:
        seen.append(change)
        if len(seen) == 2:
            got_two.set()

    async with listening(db_dsn, record):
        await village.log.append_many("s1", [line("one"), line("two")])
        await village.graph.upsert_fact(NewFact(subject_id="mira", text="Mira laughed."))
        with anyio.fail_after(10):
            await got_two.wait()
    # A witnessed campaign with no scene yet: the lines are heard by Mira, who said them.
    assert seen[0] == Change(campaign="ashfall", kind="transcript", session="s1", npcs=["mira"])
    assert seen[1].kind == "graph" and seen[1].table == "facts"


async def test_handshake_subscribers_hear_about_a_new_transcript_line(
    village: CampaignMemory, db_dsn: str
) -> None:
    server, subscriptions = make_server(village)
    updated = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == HOT:
            updated.set()

    async with (
        listening(db_dsn, subscriptions.on_change),
        Client(server, mode="legacy", message_handler=on_message) as client,
    ):
        with pytest.warns(MCPDeprecationWarning, match="resources/subscribe"):
            await client.subscribe_resource(HOT)
        await village.scenes.record([scene_at("grimjaw", "mira")])
        await village.log.append("s1", line("Grimjaw, the forge is cold."))
        with anyio.fail_after(10):
            await updated.wait()


async def test_listen_streams_hear_about_a_graph_change(
    village: CampaignMemory, db_dsn: str
) -> None:
    server, subscriptions = make_server(village)
    async with (
        listening(db_dsn, subscriptions.on_change),
        Client(server, mode="auto") as client,
        client.listen(resource_subscriptions=[HOT]) as stream,
    ):
        await village.graph.upsert_fact(NewFact(subject_id="grimjaw", text="Grimjaw sold a sword."))
        with anyio.fail_after(10):
            event = await anext(aiter(stream))
    assert event.uri == HOT


async def test_other_campaigns_changes_are_not_reported(
    village: CampaignMemory, other_campaign: CampaignMemory, db_dsn: str
) -> None:
    _, subscriptions = make_server(village)
    heard: list[str] = []
    subscriptions.bus.subscribe(lambda event: heard.append(getattr(event, "uri", "")))
    marker = anyio.Event()

    async def also(change: Change) -> None:
        await subscriptions.on_change(change)
        if change.campaign == "ashfall":
            marker.set()

    async with listening(db_dsn, also):
        await other_campaign.log.append("s1", line("elsewhere"))
        await village.log.append("s1", line("here"))
        with anyio.fail_after(10):
            await marker.wait()
    # Mira's line, heard by Mira alone: her hot context, plain and ?session=s1, once each.
    assert heard == ["glyphoxa://npc/mira/hot", "glyphoxa://npc/mira/hot?session=s1"]


async def test_the_vocabulary_is_renewed_when_the_graph_changes_not_the_talk(
    village: CampaignMemory, db_dsn: str
) -> None:
    from glyphoxa_mcp.domain.models import NewEntity
    from glyphoxa_mcp.domain.vocabulary import EntityType
    from glyphoxa_mcp.server.resource_uris import VOCABULARY_URI

    server, subscriptions = make_server(village)
    async with (
        listening(db_dsn, subscriptions.on_change),
        Client(server, mode="auto") as client,
        client.listen(resource_subscriptions=[VOCABULARY_URI, HOT]) as stream,
    ):
        events = aiter(stream)
        before = await client.read_resource(VOCABULARY_URI)
        await village.scenes.record([scene_at("grimjaw", "mira")])
        with anyio.fail_after(10):
            assert (await anext(events)).uri == HOT  # Grimjaw's scene began
        await village.log.append("s1", line("Nothing new to name."))
        with anyio.fail_after(10):
            talk = await anext(events)
        await village.graph.upsert_entity(NewEntity(type=EntityType.NPC, name="Ilvenna"))
        with anyio.fail_after(10):
            graph = {(await anext(events)).uri, (await anext(events)).uri}
        after = await client.read_resource(VOCABULARY_URI)
    assert talk.uri == HOT and graph == {HOT, VOCABULARY_URI}
    assert "Ilvenna" not in before.contents[0].text and "Ilvenna" in after.contents[0].text


async def test_an_npc_endpoint_lists_only_the_names_it_may_know(
    connect_village: Connect,
) -> None:
    import json

    from glyphoxa_mcp.server.resource_uris import VOCABULARY_URI

    async with connect_village(npc_id="mira") as mira, connect_village() as dm:
        hers = json.loads((await mira.read_resource(VOCABULARY_URI)).contents[0].text)
        everyone = json.loads((await dm.read_resource(VOCABULARY_URI)).contents[0].text)
    assert "Cult" in everyone["terms"] and "Cult" not in hers["terms"]
    assert hers["scope"] == "npc:mira" and "Grimjaw" in hers["terms"]


def scene_at(*present: str) -> Scene:
    return Scene(session_id="s1", started_at=datetime(2026, 3, 1, 19, tzinfo=UTC), present=present)


async def test_a_change_of_who_was_present_names_the_npcs_it_touches(
    village: CampaignMemory, db_dsn: str
) -> None:
    """Taking Mira out of a scene tells servers that Mira stopped hearing its lines, and that
    the scene Grimjaw and Mira were in changed; Vask, in no scene, is not named."""
    await village.scenes.record([scene_at("grimjaw", "mira")])
    await village.log.append(
        "s1", line("The guild meets at dawn.").model_copy(update={"speaker_id": "kael"})
    )
    seen: list[Change] = []

    async def record(change: Change) -> None:
        seen.append(change)

    async with listening(db_dsn, record):
        await village.scenes.record([scene_at("grimjaw")])
        with anyio.fail_after(10):
            while len(seen) < 2:
                await anyio.sleep(0.01)
    assert sorted(seen, key=lambda c: c.removed) == [
        Change(campaign="ashfall", kind="transcript", session="s1", npcs=["grimjaw", "mira"]),
        Change(campaign="ashfall", kind="transcript", session="s1", removed=True, npcs=["mira"]),
    ]


async def test_only_the_npcs_a_presence_change_names_hear_of_it(
    village: CampaignMemory,
) -> None:
    heard: list[str] = []
    npc_subscriptions = HotSubscriptions(village, "grimjaw")
    npc_subscriptions.bus.subscribe(lambda event: heard.append(getattr(event, "uri", "")))
    mira_left = Change(campaign="ashfall", kind="transcript", session="s1", npcs=["mira"])
    await npc_subscriptions.on_change(mira_left)
    assert heard == []
    await npc_subscriptions.on_change(mira_left.model_copy(update={"npcs": ["grimjaw", "mira"]}))
    assert heard == [HOT, f"{HOT}?session=s1"]
    heard.clear()
    _, dm_subscriptions = make_server(village)
    dm_subscriptions.bus.subscribe(lambda event: heard.append(getattr(event, "uri", "")))
    await dm_subscriptions.on_change(mira_left)
    assert heard == ["glyphoxa://npc/mira/hot", "glyphoxa://npc/mira/hot?session=s1"]


async def test_a_new_line_reaches_only_the_subscribers_of_the_npcs_who_heard_it(
    village: CampaignMemory, db_dsn: str
) -> None:
    """Told of every line, an NPC's client would learn when talk went on in a scene it was
    not in. Vask is in no scene: Grimjaw and Mira's talk does not reach Vask's subscribers."""
    await village.scenes.record([scene_at("grimjaw", "mira")])
    seen: list[Change] = []

    async def record(change: Change) -> None:
        seen.append(change)

    async with listening(db_dsn, record):
        await village.log.append("s1", line("The forge is cold."))
        with anyio.fail_after(10):
            while not seen:
                await anyio.sleep(0.01)
    assert seen == [
        Change(campaign="ashfall", kind="transcript", session="s1", npcs=["grimjaw", "mira"])
    ]
    heard: list[str] = []
    for npc_id in ("vask", "grimjaw"):
        subscriptions = HotSubscriptions(village, npc_id)
        subscriptions.bus.subscribe(lambda event: heard.append(getattr(event, "uri", "")))
        await subscriptions.on_change(seen[0])
    assert heard == [HOT, f"{HOT}?session=s1"]


async def test_a_line_the_dm_keeps_back_reaches_the_subscribers_of_those_who_heard_it(
    village: CampaignMemory, db_dsn: str
) -> None:
    """Their hot context no longer holds it: told so (and that a line went away), at once,
    not at the next line they hear; Vask, who never heard it, is not told."""
    await village.scenes.record([scene_at("grimjaw", "mira")])
    said = await village.log.append("s1", line("The cult meets under the mill."))
    seen: list[Change] = []

    async def record(change: Change) -> None:
        seen.append(change)

    async with listening(db_dsn, record):
        await village.log.set_dm_only([said.id], True)
        with anyio.fail_after(10):
            while not seen:
                await anyio.sleep(0.01)
    assert seen == [
        Change(
            campaign="ashfall",
            kind="transcript",
            session="s1",
            removed=True,
            npcs=["grimjaw", "mira"],
        )
    ]
