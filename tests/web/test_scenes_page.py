"""A session's scenes in the desk (issue 30): listed with who was present and who heard of
them, who was present changed, a scene added and removed, and who heard chosen lines; each
applied to what the NPCs read at once."""

from __future__ import annotations

import html

from glyphoxa_mcp.domain.models import SearchFilters
from tests.web.conftest import DeskClient

SESSION = "/c/demo/sessions/session-2"


async def heard_by(desk: DeskClient, line_id: int) -> tuple[str, ...] | None:
    return (await desk.memory.log.hearers("session-2"))[line_id]


async def test_the_session_page_lists_its_scenes_and_who_heard_each_line(
    reading_desk: DeskClient,
) -> None:
    page = html.unescape((await reading_desk.get(SESSION)).text)
    assert '<h2 id="scenes">Scenes</h2>' in page
    assert "The closed ferry" in page and "greywater-crossing" in page
    assert 'value="ysolde"' in page  # who was present, ready to change
    assert "brannoch <small" in page  # heard of it (from Ysolde)
    assert '<th scope="col">heard by</th>' in page


async def test_the_dm_changes_who_was_present_adds_and_removes_a_scene(desk: DeskClient) -> None:
    [scene] = await desk.memory.scenes.of_session("session-2")
    at = scene.started_at.isoformat()
    lines = await desk.memory.log.entries("session-2")

    changed = await desk.post(
        f"{SESSION}/scenes", {"at": at, "present": "Captain Ysolde, Old Berrit"}, page=SESSION
    )
    assert "ysolde, berrit present. Its lines are heard again." in html.unescape(changed.text)
    assert await heard_by(desk, lines[0].id) == ("berrit", "ysolde")
    found = await desk.memory.log.search("caves", SearchFilters(reader="berrit"))
    assert found, "Berrit now reads what was said at the Crossing"

    later = lines[4].spoken_at.isoformat()
    await desk.post(
        f"{SESSION}/scenes",
        {"at": later, "present": "", "location": "Old Salt Caves", "title": "Alone"},
        page=SESSION,
    )
    assert await heard_by(desk, lines[5].id) == ("ysolde",)  # only she speaks there
    removed = await desk.post(f"{SESSION}/scenes", {"at": later, "remove": "yes"}, page=SESSION)
    assert "The scene is removed" in removed.text
    assert await heard_by(desk, lines[5].id) == ("berrit", "ysolde")

    refused = await desk.post(f"{SESSION}/scenes", {"at": at, "present": "Saltmere"}, page=SESSION)
    assert "is a location" in html.unescape(refused.text)
    assert await heard_by(desk, lines[0].id) == ("berrit", "ysolde")  # nothing changed


async def test_the_dm_says_who_heard_chosen_lines(desk: DeskClient) -> None:
    lines = await desk.memory.log.entries("session-2")
    chosen = [str(lines[1].id), str(lines[2].id)]
    told = await desk.post(
        f"{SESSION}/heard-by", {"lines": chosen, "heard_by": "Brannoch"}, page=SESSION
    )
    assert "2 lines now heard by Brannoch." in html.unescape(told.text)
    assert await heard_by(desk, lines[1].id) == ("brannoch", "ysolde")  # hers: she said it
    assert await heard_by(desk, lines[2].id) == ("brannoch",)
    back = await desk.post(f"{SESSION}/heard-by", {"lines": chosen, "scene": "yes"}, page=SESSION)
    assert "now heard by those present in their scene" in html.unescape(back.text)
    assert await heard_by(desk, lines[2].id) == ("ysolde",)
