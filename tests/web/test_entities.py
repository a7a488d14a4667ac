"""Entities in the desk: one entity with its attributes, relationships and facts, where each
came from and who knows it; secrets set and cleared; retcons with their history."""

from __future__ import annotations

import html

from glyphoxa_mcp.domain.models import NewFact, Provenance, Visibility
from tests.web.conftest import DeskClient


async def test_an_entity_page_shows_what_is_known_where_it_came_from_and_who_knows(
    reading_desk: DeskClient,
) -> None:
    page = await reading_desk.get("/c/demo/entities/brannoch")

    text = html.unescape(page.text)
    assert page.status_code == 200
    assert "Brannoch" in text and "Also called the innkeeper." in text
    assert "innkeeper of the Red Kettle" in text  # an attribute
    assert "Captain Ysolde knows Brannoch." in text and "rumour, 60%" in text
    assert "Brannoch owes the Town Watch two months of tax." in text
    assert "known by everyone" in text


async def test_a_facts_session_line_is_guessed_by_its_words_when_none_is_cited(
    desk: DeskClient,
) -> None:
    memory = desk.memory
    [entry] = [
        e for e in await memory.log.entries("session-1") if "forty silver" in e.text.casefold()
    ]
    fact = await memory.graph.upsert_fact(
        NewFact(subject_id="brannoch", text="Brannoch offered forty silver", session_id="session-1")
    )

    text = html.unescape((await desk.get("/c/demo/entities/brannoch")).text)

    assert f"line:{entry.id}" in text and entry.text in text
    assert "(a guess: the line of session-1 whose words match it best)" in text
    assert 'from session <a href="/c/demo/sessions/session-1">session-1</a>' in text
    assert f'href="/c/demo/facts/{fact.id}"' in text


async def test_the_line_a_fact_was_extracted_from_is_shown_and_not_guessed(
    desk: DeskClient,
) -> None:
    memory = desk.memory
    lines = await memory.log.entries("session-1")
    [best_match] = [e for e in lines if "forty silver" in e.text.casefold()]
    cited = next(e for e in lines if e.id != best_match.id)
    fact = await memory.graph.upsert_fact(
        NewFact(
            subject_id="brannoch",
            text="Brannoch offered forty silver",
            session_id="session-1",
            provenance=Provenance(session_id="session-1", source="stated", entry_id=cited.id),
        )
    )

    for page in ("/c/demo/entities/brannoch", f"/c/demo/facts/{fact.id}"):
        text = html.unescape((await desk.get(page)).text)
        link = f'href="/c/demo/sessions/session-1?line={cited.id}#line-{cited.id}">line:{cited.id}'
        assert link in text, page
        assert f"{cited.speaker_name}:</span> {cited.text}" in text, page
        assert "(the line it was extracted from)" in text, page
        assert f"line:{best_match.id}" not in text and "a guess" not in text, page


async def test_a_secret_set_on_the_page_is_stored_and_cleared_again(desk: DeskClient) -> None:
    page = "/c/demo/entities/brannoch"

    made_secret = await desk.post(
        "/c/demo/visibility",
        {"kind": "entity", "item": "brannoch", "secret": "on", "known_by": "Old Berrit, ysolde"},
        page=page,
    )
    stored = (await desk.memory.graph.get_entity("brannoch")).visibility
    revealed = await desk.post(
        "/c/demo/visibility", {"kind": "entity", "item": "brannoch"}, page=page
    )

    assert "brannoch is now secret, known by berrit, ysolde." in made_secret.text
    assert stored == Visibility(secret=True, known_by=("berrit", "ysolde"))
    assert "brannoch is now known by everyone." in revealed.text
    assert (await desk.memory.graph.get_entity("brannoch")).visibility == Visibility()


async def test_an_unknown_knower_is_named_with_near_misses_and_nothing_changes(
    reading_desk: DeskClient,
) -> None:
    rel = (await reading_desk.memory.curation.review_queue(0.7)).relationships[0]

    page = await reading_desk.post(
        "/c/demo/visibility",
        {"kind": "relationship", "item": str(rel.id), "secret": "on", "known_by": "Ysold"},
        page="/c/demo/entities/brannoch",
    )

    assert "known_by: no entity named &#39;Ysold&#39;. Did you mean" in page.text
    assert (await reading_desk.memory.graph.get_relationship(rel.id)).visibility == Visibility()


async def test_a_retcon_keeps_the_old_text_as_history(desk: DeskClient) -> None:
    fact = next(f for f in await desk.memory.graph.facts_about("brannoch") if "tax" in f.text)

    page = await desk.post(
        f"/c/demo/facts/{fact.id}/retcon",
        {"text": "Brannoch paid the Town Watch in full."},
        page=f"/c/demo/facts/{fact.id}",
    )
    [new] = [f for f in await desk.memory.graph.facts_about("brannoch") if "paid" in f.text]
    history = html.unescape((await desk.get(f"/c/demo/facts/{new.id}")).text)
    old = html.unescape((await desk.get(f"/c/demo/facts/{fact.id}")).text)

    assert f"fact:{fact.id} is retconned: fact:{new.id} now reads" in html.unescape(page.text)
    assert history.index("Brannoch paid the Town Watch in full.") < history.index(
        "Brannoch owes the Town Watch two months of tax."
    )
    assert f"replaced by fact:{new.id}" in history
    assert "This version was retconned" in old and "Retcon: new text" not in old
