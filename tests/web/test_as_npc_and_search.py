"""The campaign as one NPC sees it, and search across everything, in the desk."""

from __future__ import annotations

import html
import re

import pytest

from glyphoxa_mcp.web.routes import as_npc
from tests.web.conftest import DeskClient


def section(page: str, heading: str) -> str:
    """The HTML of the page's section under the heading of that id, unescaped."""
    return html.unescape(page.split(f'id="{heading}">', 1)[1].split("</section>", 1)[0])


def plain(fragment: str) -> str:
    """HTML as the words a reader sees, spaces collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", fragment).split())


def answer(page: str, call: str) -> str:
    """The article of one tool's answer, named by its call as the page writes it."""
    tools = section(page, "tools")
    return tools.split(f"<code>{call}</code>", 1)[1].split("</article>", 1)[0]


async def test_the_npc_is_picked_by_name_from_the_campaigns_npcs(
    reading_desk: DeskClient,
) -> None:
    page = await reading_desk.get("/c/demo/as-npc")

    picker = page.text.split('<select name="npc" required>', 1)[1].split("</select>", 1)[0]
    options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', picker)
    assert options[0] == ("", "choose an NPC")
    assert ("ysolde", "Captain Ysolde") in options and ("berrit", "Old Berrit") in options
    assert len(options) == 1 + 8  # the sample's NPCs, no player, place or faction
    assert 'name="npc" value=' not in page.text  # no id to type


async def test_an_npcs_view_shows_its_hot_context_first_then_each_tools_answer(
    reading_desk: DeskClient,
) -> None:
    page = await reading_desk.get(
        "/c/demo/as-npc", params={"npc": "Ysolde", "query": "Salt Knives"}
    )

    text = html.unescape(page.text)
    assert page.status_code == 200
    assert '<option value="ysolde" selected>Captain Ysolde</option>' in text
    assert text.index('id="hot"') < text.index('id="tools"') < text.index('id="known-sessions"')
    hot = section(page.text, "hot")
    assert "<h3>Who you are: Captain Ysolde</h3>" in hot
    assert "<h3>What was just said</h3>" in hot
    assert "## " not in hot.split("<details>", 1)[0]  # headings, not markdown
    for tool in ("memory.query_entities", "memory.search_sessions", "memory.search_facts"):
        assert f"<code>{tool}(" in text
    assert "memory.get_session_summary()" in text
    # The Salt Knives are a secret Ysolde does not know: no tool names them to her.
    assert "salt-knives" not in text


async def test_each_answer_reads_as_the_npc_would_read_it_with_its_json_a_click_away(
    reading_desk: DeskClient,
) -> None:
    page = await reading_desk.get(
        "/c/demo/as-npc", params={"npc": "brannoch", "query": "salt caves"}
    )

    entities = answer(page.text, 'memory.query_entities(name="salt caves")')
    assert "<strong>Old Salt Caves</strong>" in entities
    assert "<dt>description</dt><dd>abandoned salt workings in the cliffs" in entities
    passages = answer(page.text, 'memory.search_sessions(query="salt caves")')
    # What Brannoch said himself, by speaker; not Ysolde's lines at the Crossing he missed.
    assert '<span class="speaker">Brannoch:</span>' in passages
    assert "Captain Ysolde:" not in plain(passages.split("<details>", 1)[0])
    facts = answer(page.text, 'memory.search_facts(query="salt caves")')
    # What the Crossing taught reached him through Ysolde: marked as hearsay, from her.
    assert "hearsay, heard from Captain Ysolde" in plain(facts)
    summary = plain(answer(page.text, "memory.get_session_summary()"))
    assert "Captain Ysolde told you (you were not there):" in summary
    assert "The closed ferry at Greywater Crossing: heard of, from Captain Ysolde" in summary
    for article in (entities, passages, facts):
        raw = article.split("<details><summary>As JSON</summary><pre>", 1)[1]
        assert '"scope": "npc:brannoch"' in raw


async def test_what_an_npc_knows_of_each_session_witnessed_heard_of_or_nothing(
    reading_desk: DeskClient,
) -> None:
    known = {}
    for npc in ("brannoch", "berrit", "ysolde"):
        page = await reading_desk.get("/c/demo/as-npc", params={"npc": npc})
        rows = section(page.text, "known-sessions").split("<tbody>", 1)[1]
        known[npc] = [plain(row) for row in rows.split("</tr>")[:-1]]

    assert known["brannoch"] == [
        "The Crossing session-2 heard of from Captain Ysolde "
        "The closed ferry at Greywater Crossing: heard of, from Captain Ysolde",
        "Rumours at the Red Kettle session-1 witnessed, all of it it was at every scene",
    ]
    assert known["berrit"] == [
        "The Crossing session-2 nothing "
        "it was at none of its scenes, and no word of them reached it",
        "Rumours at the Red Kettle session-1 witnessed, all of it it was at every scene",
    ]
    assert known["ysolde"][0] == "The Crossing session-2 witnessed, all of it it was at every scene"
    assert known["ysolde"][1].startswith(
        "Rumours at the Red Kettle session-1 heard of from Brannoch"
    )


async def test_a_session_kept_to_the_dm_is_known_to_no_npc(desk: DeskClient) -> None:
    session = "/c/demo/sessions/session-1"
    await desk.post(f"{session}/dm-only", {"dm_only": "yes"}, page=session)

    page = await desk.get("/c/demo/as-npc", params={"npc": "brannoch"})

    rows = plain(section(page.text, "known-sessions"))
    assert "session-1 nothing the session is kept to the DM" in rows


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
    assert 'id="hot"' not in page.text


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


async def test_with_more_npcs_than_listed_the_npc_is_picked_by_typing_its_name(
    reading_desk: DeskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(as_npc, "NPCS_LISTED", 3)

    page = await reading_desk.get("/c/demo/as-npc", params={"npc": "ysolde"})

    text = html.unescape(page.text)
    assert '<input type="text" name="npc" value="Captain Ysolde" list="npc-names"' in text
    names = text.split('<datalist id="npc-names">', 1)[1].split("</datalist>", 1)[0]
    assert re.findall(r'<option value="([^"]+)">', names) == [
        "Brannoch",
        "Captain Ysolde",
        "Dovrek",
    ]
    assert "What Captain Ysolde reads first" in text
