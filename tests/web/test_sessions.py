"""Sessions in the desk: the transcript with corrected names marked, lines and whole sessions
kept to the DM, and the summary rewritten by the DM."""

from __future__ import annotations

import html
import re

from glyphoxa_mcp.domain.episodes import episode_id
from tests.web.conftest import DeskClient

SESSION = "/c/demo/sessions/session-2"


async def test_the_transcript_marks_the_names_correction_put_back(reading_desk: DeskClient) -> None:
    page = await reading_desk.get(SESSION)

    assert page.status_code == 200
    assert '<mark title="heard: Bran knock">Brannoch</mark> sent us.' in page.text
    assert "1-8 of 8 lines" in html.unescape(page.text)


async def test_lines_kept_to_the_dm_are_marked_and_can_be_shown_again(desk: DeskClient) -> None:
    lines = await desk.memory.log.entries("session-2")
    chosen = [lines[1].id, lines[2].id]

    kept = await desk.post(
        f"{SESSION}/lines", {"lines": [str(i) for i in chosen], "dm_only": "yes"}, page=SESSION
    )
    marked = {e.id for e in await desk.memory.log.entries("session-2") if e.dm_only}
    shown = await desk.post(
        f"{SESSION}/lines", {"lines": str(chosen[0]), "dm_only": "no"}, page=SESSION
    )

    assert "2 lines kept to the DM. The summary was written again" in kept.text
    assert kept.text.count('<span class="tag secret">DM-only</span>') == 2
    assert marked == set(chosen)
    assert "1 line shown to NPCs again." in shown.text
    assert {e.id for e in await desk.memory.log.entries("session-2") if e.dm_only} == {chosen[1]}


async def test_the_dms_summary_replaces_the_sessions_and_its_episodes(desk: DeskClient) -> None:
    page = await desk.post(
        f"{SESSION}/summary",
        {"summary": "  The party crossed at low tide and owes Ysolde a report.  "},
        page=SESSION,
    )

    session = await desk.memory.sessions.get("session-2")
    assert "The summary of &#39;session-2&#39; is now yours" in page.text
    assert (session.summary, session.summary_source) == (
        "The party crossed at low tide and owes Ysolde a report.",
        "dm",
    )
    episode = await desk.memory.graph.get_entity(episode_id("session-2"))
    # The sample is witnessed: its episodes, which every NPC may know, hold no summary.
    assert "summary" not in episode.attributes


async def test_a_whole_session_kept_to_the_dm_hides_what_it_taught(desk: DeskClient) -> None:
    page = await desk.post(f"{SESSION}/dm-only", {"dm_only": "yes"}, page=SESSION)

    assert "Session &#39;session-2&#39; is DM-only" in page.text
    assert (await desk.memory.sessions.get("session-2")).dm_only
    episode = await desk.memory.graph.get_entity(episode_id("session-2"))
    assert episode.visibility.secret
    assert "Let NPCs read this session" in page.text


async def test_a_line_asked_for_opens_the_page_holding_it(reading_desk: DeskClient) -> None:
    line = (await reading_desk.memory.log.entries("session-1"))[-1]

    page = await reading_desk.get(f"/c/demo/sessions/session-1?line={line.id}")
    found = await reading_desk.get("/c/demo/sessions/session-1?q=fishes+by+the+crossing")

    assert f'<tr id="line-{line.id}" class=" wanted">' in page.text
    assert "1-1 of 1 lines" in html.unescape(found.text)
    assert '<mark title="heard: old barrett">Old Berrit</mark>' in found.text


async def test_the_sessions_are_listed(reading_desk: DeskClient) -> None:
    page = html.unescape((await reading_desk.get("/c/demo/sessions")).text)

    assert "Rumours at the Red Kettle" in page and "The Crossing" in page
    assert "1-2 of 2 sessions" in page


async def test_the_summary_box_is_as_tall_as_its_summary(desk: DeskClient) -> None:
    scene = "Scene {}: the party crossed the river and argued."
    long_summary = " ".join(scene.format(n) for n in range(40))
    short = await desk.get(SESSION)
    await desk.post(f"{SESSION}/summary", {"summary": long_summary}, page=SESSION)

    long = await desk.get(SESSION)

    rows = re.compile(r'<textarea name="summary" rows="(\d+)" cols="100"')
    [short_rows] = rows.findall(short.text)
    [long_rows] = rows.findall(long.text)
    assert int(short_rows) < 10
    assert int(long_rows) == 21  # 1,989 characters, 100 a line, and one to write on
