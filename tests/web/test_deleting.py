"""Deleting from the desk: a transcript line forgotten (its summary then waits for review), a
session, the campaign; a session or campaign only when its id is typed to confirm."""

from __future__ import annotations

import html

import pytest

from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.deletion import summaries_to_review
from tests.web.conftest import DeskClient
from tests.web.test_access import dm_token, sign_in

SESSION = "/c/demo/sessions/session-1"


async def test_a_forgotten_line_is_gone_and_its_summary_waits_for_review(
    desk: DeskClient,
) -> None:
    line = next(e for e in await desk.memory.log.entries("session-1") if "forty" in e.text)

    forgotten = await desk.post(f"/c/demo/lines/{line.id}/forget", {}, page=SESSION)
    review = html.unescape((await desk.get("/c/demo/review")).text)
    reviewed = await desk.post(f"{SESSION}/summary-reviewed", {}, page=SESSION)

    text = html.unescape(forgotten.text)
    assert f"Forgot line:{line.id};" in text and "The summary waits for your review" in text
    assert f"line:{line.id}" not in text.replace(f"Forgot line:{line.id}", "")
    assert line.id not in {e.id for e in await desk.memory.log.entries("session-1")}
    assert "forty silver" not in ((await desk.memory.sessions.get("session-1")).summary or "")
    assert "Summaries to review" in review and 'href="/c/demo/sessions/session-1#summary"' in review
    assert "The summary of &#39;session-1&#39; is reviewed." in reviewed.text
    assert await summaries_to_review(desk.db, "demo") == []


async def test_a_session_is_deleted_only_when_its_id_is_typed(desk: DeskClient) -> None:
    refused = await desk.post(f"{SESSION}/delete", {"confirm": "session-2"}, page=SESSION)
    still_there = await desk.memory.sessions.get("session-1")
    deleted = await desk.post(f"{SESSION}/delete", {"confirm": "session-1"}, page=SESSION)

    assert "confirm: type the session&#39;s id, session-1, to delete it" in refused.text
    assert still_there.id == "session-1"
    assert "Deleted session &#39;session-1&#39;: 11 lines" in deleted.text
    assert str(deleted.url).endswith("/c/demo/sessions")
    with pytest.raises(NotFoundError):
        await desk.memory.sessions.get("session-1")
    assert await desk.memory.log.entries("session-1") == []


async def test_the_campaign_is_deleted_only_when_its_id_is_typed(desk: DeskClient) -> None:
    refused = await desk.post("/c/demo/delete", {"confirm": "Demo"})
    still_there = await Campaigns(desk.db).get("demo")
    deleted = await desk.post("/c/demo/delete", {"confirm": "demo"})

    assert "confirm: type the campaign&#39;s id, demo, to delete it" in refused.text
    assert still_there.id == "demo"
    assert "Deleted campaign &#39;demo&#39;: 2 sessions, 19 lines" in deleted.text
    assert await Campaigns(desk.db).list() == []
    assert (await desk.get("/c/demo/review")).status_code == 404


async def test_deleting_the_campaign_signs_its_dm_out(token_desk: DeskClient) -> None:
    await sign_in(token_desk, await dm_token(token_desk))

    page = html.unescape((await token_desk.post("/c/demo/delete", {"confirm": "demo"})).text)

    assert "Deleted campaign 'demo'" in page and 'type="password"' in page
    assert (await token_desk.get("/c/demo/review")).status_code == 303
