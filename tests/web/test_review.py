"""The review queue in the desk: what waits, confirming and rejecting (in bulk), editing."""

from __future__ import annotations

import html

import pytest

from glyphoxa_mcp.errors import NotFoundError
from tests.web.conftest import DeskClient


async def references(desk: DeskClient) -> dict[str, str]:
    """What waits for review in the seeded campaign, by what it says: its reference."""
    queue = await desk.memory.curation.review_queue(0.7)
    names = {r.rel_type: f"rel:{r.id}" for r in queue.relationships}
    facts = {f.text.split()[0]: f"fact:{f.id}" for f in queue.facts}
    held = {p.entity.name: f"import:{p.id}" for p in await desk.memory.pending.list()}
    return names | facts | held


async def test_the_queue_lists_rumours_held_imports_and_what_a_session_proposed(
    reading_desk: DeskClient,
) -> None:
    page = await reading_desk.get("/c/demo/review")

    assert page.status_code == 200
    text = html.unescape(page.text)
    assert "Captain Ysolde knows Brannoch." in text
    assert "Maelis can hear the drowned speak at the spring tide." in text
    assert "Harbour Master Ilse (npc)" in text and "imported from csv" in text
    assert "The Ferryman (npc)" in text and "proposed from a session" in text
    assert text.count('name="items" value=') == 2 * 6  # a checkbox and a row's own form each
    assert "1-6 of 6 items waiting" in text


async def test_confirming_and_rejecting_in_bulk_settles_each_item(desk: DeskClient) -> None:
    ref = await references(desk)

    confirmed = await desk.post(
        "/c/demo/review",
        {"items": [ref["KNOWS"], ref["Brannoch"], ref["Harbour Master Ilse"]], "action": "confirm"},
    )
    rejected = await desk.post(
        "/c/demo/review",
        {"items": [ref["PARTICIPATED_IN"], ref["Maelis"], ref["The Ferryman"]], "action": "reject"},
    )

    assert f"Confirmed 3: {ref['KNOWS']}, {ref['Brannoch']}" in html.unescape(confirmed.text)
    assert "Rejected (deleted) 3" in html.unescape(rejected.text)
    assert "No items waiting." in rejected.text
    memory = desk.memory
    fact = await memory.graph.get_fact(int(ref["Brannoch"].split(":")[1]))
    assert fact.provenance.dm_confirmed
    assert (await memory.graph.get_entity("harbour-master-ilse")).name == "Harbour Master Ilse"
    with pytest.raises(NotFoundError):
        await memory.graph.get_fact(int(ref["Maelis"].split(":")[1]))
    assert await memory.pending.list() == []
    queue = await memory.curation.review_queue(0.7)
    assert queue.relationships == () and queue.facts == ()


async def test_a_bulk_action_with_an_item_gone_changes_nothing_and_names_it(
    desk: DeskClient,
) -> None:
    ref = await references(desk)

    page = await desk.post(
        "/c/demo/review", {"items": [ref["Brannoch"], "fact:99999"], "action": "confirm"}
    )

    assert "No fact 99999 in campaign &#39;demo&#39;." in page.text
    fact = await desk.memory.graph.get_fact(int(ref["Brannoch"].split(":")[1]))
    assert not fact.provenance.dm_confirmed  # the whole action was rolled back


async def test_editing_a_rumour_makes_it_the_dms_own_statement(desk: DeskClient) -> None:
    ref = await references(desk)
    fact_id = int(ref["Brannoch"].split(":")[1])
    rel_id = int(ref["KNOWS"].split(":")[1])
    import_id = int(ref["Harbour Master Ilse"].split(":")[1])

    retconned = await desk.post(
        f"/c/demo/facts/{fact_id}/retcon", {"text": "Brannoch owes the Watch a year."}
    )
    retyped = await desk.post(f"/c/demo/relationships/{rel_id}/type", {"rel_type": "distrusts"})
    revised = await desk.post(
        f"/c/demo/imports/{import_id}",
        {"name": "Ilse Varn", "type": "npc", "aliases": "the harbour master, Ilse"},
    )

    assert f"fact:{fact_id} is retconned" in html.unescape(retconned.text)
    assert "DISTRUSTS, confirmed" in html.unescape(retyped.text)
    assert f"import:{import_id} now proposes Ilse Varn (npc)." in html.unescape(revised.text)
    memory = desk.memory
    [old, new] = await memory.curation.history(
        (await memory.graph.get_fact(fact_id)).superseded_by or 0
    )
    assert (old.id, new.text) == (fact_id, "Brannoch owes the Watch a year.")
    assert new.provenance.dm_confirmed and new.provenance.source == "dm"
    held = {p.id: p.entity for p in await memory.pending.list()}
    assert held[import_id].name == "Ilse Varn"
    assert held[import_id].aliases == ("the harbour master", "Ilse")
    queue = await memory.curation.review_queue(0.7)
    assert [r.rel_type for r in queue.relationships] == ["PARTICIPATED_IN"]
    assert [f.text.split()[0] for f in queue.facts] == ["Maelis"]


@pytest.mark.parametrize(
    ("path", "data", "problem"),
    [
        ("/c/demo/review", {"action": "confirm"}, "items: List should have at least 1 item"),
        ("/c/demo/review", {"items": "rel:1", "action": "delete"}, "action: Input should be"),
        ("/c/demo/review", {"items": "entity:1", "action": "confirm"}, "review items are rel:ID"),
        ("/c/demo/relationships/1/type", {"rel_type": "no way!"}, "is not a relationship type"),
        ("/c/demo/imports/1", {"name": " ", "type": "npc"}, "name: String should have at least"),
        ("/c/demo/imports/1", {"name": "Ilse", "type": "dragon"}, "type: Input should be"),
    ],
)
async def test_a_broken_field_is_named_on_the_page_and_nothing_changes(
    reading_desk: DeskClient, path: str, data: dict[str, object], problem: str
) -> None:
    before = await reading_desk.memory.curation.review_queue(0.7)

    page = await reading_desk.post(path, data)

    assert page.status_code == 200
    assert problem in html.unescape(page.text)
    assert 'class="note error"' in page.text
    assert await reading_desk.memory.curation.review_queue(0.7) == before
