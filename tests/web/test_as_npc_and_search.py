"""The campaign as one NPC sees it, and search across everything, in the desk."""

from __future__ import annotations

import html
import re

from tests.web.conftest import DeskClient


async def test_an_npcs_view_shows_its_hot_context_and_each_tools_answer(
    reading_desk: DeskClient,
) -> None:
    page = await reading_desk.get(
        "/c/demo/as-npc", params={"npc": "Ysolde", "query": "Salt Knives"}
    )

    text = html.unescape(page.text)
    assert page.status_code == 200
    assert "Hot context of <code>ysolde</code>" in text
    assert "## Who you are: Captain Ysolde" in text
    for tool in ("memory.query_entities", "memory.search_sessions", "memory.search_facts"):
        assert f"<code>{tool}(" in text
    assert "memory.get_session_summary()" in text
    # The Salt Knives are a secret Ysolde does not know: no tool names them to her.
    assert "salt-knives" not in text


async def test_the_dm_sees_the_secret_an_npc_who_knows_it_sees_too(
    reading_desk: DeskClient,
) -> None:
    page = await reading_desk.get(
        "/c/demo/as-npc", params={"npc": "berrit", "query": "Salt Knives"}
    )

    assert '"id": "salt-knives"' in html.unescape(page.text)


async def test_a_fast_tier_npc_is_refused_the_tools_its_tier_does_not_list(
    reading_desk: DeskClient,
) -> None:
    page = await reading_desk.get(
        "/c/demo/as-npc", params={"npc": "ysolde", "tier": "FAST", "query": "caravan"}
    )

    text = html.unescape(page.text)
    assert "memory.search_sessions is not available in the FAST tier" in text
    assert text.count("is not available in the FAST tier") == 3  # all but query_entities


async def test_an_unknown_npc_is_named_with_near_misses(reading_desk: DeskClient) -> None:
    page = await reading_desk.get("/c/demo/as-npc", params={"npc": "Ysold"})

    assert "npc: no entity named &#39;Ysold&#39;. Did you mean" in page.text
    assert "Hot context of" not in page.text


async def test_search_finds_entities_facts_lines_and_sessions(reading_desk: DeskClient) -> None:
    page = await reading_desk.get("/c/demo/search", params={"q": "Brannoch"})

    text = html.unescape(page.text)
    assert 'href="/c/demo/entities/brannoch">Brannoch</a>' in text
    assert "Brannoch owes the Town Watch two months of tax." in text
    assert "Brannoch sent us." in text  # a transcript line
    assert 'href="/c/demo/sessions/session-1">session-1</a>' in text  # its summary names him


def listed(page: str, heading: str) -> list[str]:
    """The items of a section of the search page, as text, in order (its details apart)."""
    section = page.split(f'id="{heading}">', 1)[1].split("</section>", 1)[0]
    section = section.split("<details", 1)[0]
    items = re.findall(r"<li>(.*?)</li>", section, flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", html.unescape(item)).split()) for item in items]


async def test_search_lists_no_relationship_holding_none_of_the_words(
    reading_desk: DeskClient,
) -> None:
    page = await reading_desk.get("/c/demo/search", params={"q": "crown"})

    # Nothing in the sample holds the word: none of its "X is at Y" either.
    assert listed(page.text, "found-facts") == []
    assert "None holding these words." in page.text
    apart = page.text.split('class="by-meaning"', 1)[1].split("</details>", 1)[0]
    assert "<code>relationship</code>" not in apart
    assert "more near in meaning, holding none of the words" in page.text


async def test_search_ranks_what_holds_more_of_the_words_first(reading_desk: DeskClient) -> None:
    page = await reading_desk.get("/c/demo/search", params={"q": "iron caravan"})

    facts = listed(page.text, "found-facts")
    lines = listed(page.text, "found-lines")
    assert facts[0].startswith("fact:1 The iron caravan was last seen at Greywater Crossing.")
    assert [f for f in facts if f.startswith("relationship")] == [
        "relationship Brannoch gives the quest The Missing Caravan. (Brannoch)"
    ]
    both = [line for line in lines if "iron caravan" in line]
    assert len(both) == 2 and lines[:2] == both
    assert listed(page.text, "found-entities")[0].startswith("The Missing Caravan")
