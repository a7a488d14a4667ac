"""Scenes set by the program that hears the table (scene.set, and session.start's opening
scene): stored for the session from their time, names resolved to the campaign's NPCs and
locations; a name that names none is refused alike whatever else it names, with no near
names offered (a recorder reads nothing)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.app import App
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.recording.test_recorder_reads_nothing import answer, recorder_client

START = datetime(2026, 3, 1, 19, tzinfo=UTC)


async def test_scenes_set_by_the_recorder_are_stored_from_their_time(
    app: App, village: CampaignMemory
) -> None:
    async with recorder_client(app) as client:
        opened, _ = await answer(
            client,
            "session.start",
            session_id="night",
            started_at=START.isoformat(),
            present=["the blacksmith", "Mira"],
            location="Red Kettle",
        )
        later = START + timedelta(minutes=20)
        moved, words = await answer(
            client,
            "scene.set",
            session_id="night",
            present=["vask"],
            title="At the gate",
            at=later.isoformat(),
        )
    assert opened == {"session_id": "night", "new": True}
    assert moved == {"session_id": "night", "started_at": later.isoformat().replace("+00:00", "Z")}
    inn, gate = await village.scenes.of_session("night")
    assert (inn.started_at, inn.location_id, inn.present) == (
        START,
        "red-kettle",
        ("grimjaw", "mira"),
    )
    assert (gate.started_at, gate.location_id, gate.present, gate.title) == (
        later,
        None,
        ("vask",),
        "At the gate",
    )
    assert "grimjaw" not in words and "Vask" not in words


async def test_a_name_the_campaign_does_not_hold_as_an_npc_is_refused_alike(
    app: App, village: CampaignMemory
) -> None:
    """An unknown name, a near miss of a secret faction's name and a location named present
    get the same refusal with only the name asked for in it; nothing is stored."""
    refusals = []
    async with recorder_client(app) as client:
        await answer(client, "session.start", session_id="night")
        for name in ("Nobody", "Cul", "Cult", "Red Kettle"):
            result = await client.call_tool("scene.set", {"session_id": "night", "present": [name]})
            assert result.is_error
            refusals.append(text_of(result.content).replace(repr(name), "<name>"))
        place = await client.call_tool(
            "scene.set", {"session_id": "night", "present": [], "location": "Mira"}
        )
    assert len(set(refusals)) == 1, refusals
    assert "names no NPC of this campaign" in refusals[0]
    assert "Did you mean" not in refusals[0]
    assert "names no location of this campaign" in text_of(place.content)
    assert await village.scenes.of_session("night") == []
