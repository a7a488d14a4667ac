"""What-if branches: `fork_campaign` copies a campaign's memory (storage/forking.py) and
`branch_tree` shows the lineage (storage/branches.py)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from pydantic import BaseModel

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.listings import Branch
from glyphoxa_mcp.errors import ConflictError, InvalidInputError, NotFoundError
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder
from glyphoxa_mcp.storage.branches import branch_tree, lineage_tree
from glyphoxa_mcp.storage.deletion import delete_campaign
from glyphoxa_mcp.storage.forking import FORKED_TABLES, fork_campaign, fork_point
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View
from tests.storage.saga_fixtures import (
    CAMPAIGN,
    EARLY_DM_FACT,
    FIRST,
    FIRST_LINES,
    FORGOTTEN,
    LATE_DM_FACT,
    LATER,
    LATER_FACTS,
    LATER_LINES,
    PALE_KING,
    RETCON,
    RETCONNED,
)

TEN = clamp(10, 10)
VASK_AT_DUSK, OWED = FIRST_LINES[-1][2], LATER_LINES[1][2]
# Columns that hold ids the copy gives anew, or that only the catalog's own tables make.
NEW_IDS = ("campaign_id", "id", "row_id", "entry_ids", "superseded_by", "source_entry_id")
# Rows a branch has of its own (counters, its log, its lineage) or none of (tokens).
OWN_ROWS = {
    "campaigns",
    "entity_versions",
    "knowledge_versions",
    "entity_changes",
    "access_tokens",
}


async def campaign_tables(db: Database) -> list[str]:
    """Every table of the schema that holds rows of a campaign, from the catalog."""
    rows = await db.pool.fetch(
        """
        SELECT c.relname::text AS name FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
          AND (c.relname = 'campaigns' OR EXISTS (
              SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'campaign_id'))
        ORDER BY 1
        """
    )
    return [row["name"] for row in rows]


async def rows_of(db: Database, table: str, campaign: str) -> Counter[str]:
    """The campaign's rows of `table` as JSON, without the columns holding new ids."""
    rows = await db.pool.fetch(
        f"SELECT to_jsonb(x) - $2::text[] AS row FROM {table} x WHERE x.campaign_id = $1",
        campaign,
        list(NEW_IDS),
    )
    return Counter(json.dumps(row["row"], sort_keys=True) for row in rows)


async def history_texts(db: Database, campaign: str) -> set[tuple[str, str | None]]:
    """Each fact's text with the text of the version that replaced it."""
    rows = await db.pool.fetch(
        "SELECT f.text, newer.text AS newer FROM facts f LEFT JOIN facts newer "
        "ON newer.campaign_id = f.campaign_id AND newer.id = f.superseded_by "
        "WHERE f.campaign_id = $1",
        campaign,
    )
    return {(row["text"], row["newer"]) for row in rows}


async def cited_lines(db: Database, campaign: str) -> set[tuple[str, str]]:
    """Each fact's text, or relationship's type, with the text of the line it cites."""
    rows = await db.pool.fetch(
        """
        SELECT x.said, e.text AS line FROM (
            SELECT campaign_id, text AS said, source_entry_id FROM facts
            UNION ALL SELECT campaign_id, rel_type, source_entry_id FROM relationships
        ) x JOIN session_entries e ON e.campaign_id = x.campaign_id AND e.id = x.source_entry_id
        WHERE x.campaign_id = $1
        """,
        campaign,
    )
    return {(row["said"], row["line"]) for row in rows}


def without_ids(value: object) -> object:
    """A tool's answer without the numbers a copy gives anew (rows' ids, line ids)."""
    if isinstance(value, dict):
        return {
            key: without_ids(item)
            for key, item in value.items()
            if not (key == "id" and isinstance(item, int)) and key not in ("entry_ids", "scope")
        }
    if isinstance(value, list):
        return [without_ids(item) for item in value]
    return value


def same_but_ids(first: BaseModel, second: BaseModel) -> bool:
    return without_ids(first.model_dump(mode="json")) == without_ids(second.model_dump(mode="json"))


async def test_every_table_of_the_schema_says_how_a_fork_treats_it(saga: Database) -> None:
    assert set(await campaign_tables(saga)) <= set(FORKED_TABLES)


async def test_a_full_fork_holds_every_row_of_the_parent_under_new_ids(
    saga: Database, embedder: WordLlamaEmbedder
) -> None:
    fork = await fork_campaign(saga, CAMPAIGN, "what-if")
    assert fork.sessions_left_out == () and fork.rows["session_entries"] == 10
    for table in await campaign_tables(saga):
        if table not in OWN_ROWS:
            assert await rows_of(saga, table, "what-if") == await rows_of(saga, table, CAMPAIGN), (
                table
            )
    assert await history_texts(saga, "what-if") == await history_texts(saga, CAMPAIGN)
    # A fact or relationship cites the copy of its line.
    assert (
        await cited_lines(saga, "what-if")
        == await cited_lines(saga, CAMPAIGN)
        == {
            (RETCONNED, FORGOTTEN),
            (RETCON, FORGOTTEN),
            ("KNOWS", VASK_AT_DUSK),
            (LATER_FACTS[0], OWED),
        }
    )
    # The passages hold the copies of their lines, in order.
    passage_lines = """
        SELECT c.content, array(SELECT e.text FROM unnest(c.entry_ids) WITH ORDINALITY u(id, n)
                                JOIN session_entries e ON e.campaign_id = c.campaign_id
                                 AND e.id = u.id ORDER BY u.n) AS lines
        FROM chunks c WHERE c.campaign_id = $1 ORDER BY c.content
    """
    copied = await saga.pool.fetch(passage_lines, "what-if")
    assert copied == await saga.pool.fetch(passage_lines, CAMPAIGN)
    assert all(len(row["lines"]) == row["content"].count("\n") + 1 for row in copied)
    assert (
        await saga.pool.fetchval("SELECT count(*) FROM access_tokens WHERE campaign_id = 'what-if'")
        == 0
    )

    # Every tool answers the branch as it answers the parent.
    parent = View(CampaignMemory(saga, CAMPAIGN), None, embedder)
    branch = View(CampaignMemory(saga, "what-if"), None, embedder)
    for view in (parent, branch):
        await view.memory.campaign()
    for query in ("salt-bread at dawn", "who owes money to the guild"):
        answers = [await view.search_sessions(query, TEN) for view in (parent, branch)]
        assert [h.text for h in answers[0].results] == [h.text for h in answers[1].results]
        facts = [await view.search_facts(query, TEN) for view in (parent, branch)]
        assert [h.text for h in facts[0].results] == [h.text for h in facts[1].results]
    vask = [await view.query_entities(TEN, clamp(1, 3), name="Vask") for view in (parent, branch)]
    assert same_but_ids(vask[0], vask[1])
    summaries = [await view.session_summary(FIRST) for view in (parent, branch)]
    assert summaries[1].summary == summaries[0].summary and summaries[1].summary
    hot = [await view.hot_context("mira", LATER) for view in (parent, branch)]
    assert same_but_ids(hot[0], hot[1])


async def test_a_fork_at_a_session_holds_the_memory_as_it_stood_after_it(
    saga: Database, embedder: WordLlamaEmbedder
) -> None:
    fork = await fork_campaign(saga, CAMPAIGN, "before-harbour", at_session=FIRST)
    assert fork.at_session == FIRST and fork.sessions_left_out == (LATER,)
    branch = CampaignMemory(saga, "before-harbour")
    assert [s.id for s in await branch.sessions.list()] == [FIRST]
    assert {e.session_id for e in await branch.log.entries(FIRST)} == {FIRST}
    assert (
        await saga.pool.fetchval(
            "SELECT count(*) FROM session_entries WHERE campaign_id = $1", "before-harbour"
        )
        == 6
    )
    entities = {e.id for e in await branch.queries.entity_names()}
    # Known before the harbour night, or spoken of by what is kept; not the later episode,
    # nor the Pale King, first named that night.
    assert entities == {"mira", "vask", "kettle", f"episode-{FIRST}"}
    # The retcon made after the harbour night began is undone: the fact as first learned.
    current = {f.text for f in await branch.graph.current_facts()}
    assert current == {EARLY_DM_FACT, RETCONNED}
    assert RETCON not in {text for text, _ in await history_texts(saga, "before-harbour")}
    assert LATE_DM_FACT not in current and not current & set(LATER_FACTS)
    assert await cited_lines(saga, "before-harbour") == {
        (RETCONNED, FORGOTTEN),
        ("KNOWS", VASK_AT_DUSK),
    }
    relationships = {
        (r.source_id, r.rel_type, r.target_id) for r in await branch.graph.all_relationships()
    }
    assert ("vask", "KNOWS", "mira") in relationships and ("mira", "WORKS_AT", "kettle") in (
        relationships
    )
    assert all(f"episode-{LATER}" not in r for r in relationships)
    assert await branch.pending.list() == []
    if "lore_documents" in await campaign_tables(saga):
        counts = await saga.pool.fetchrow(
            "SELECT (SELECT count(*) FROM lore_sections WHERE campaign_id = $1) AS sections,"
            " (SELECT count(*) FROM lore_pins WHERE campaign_id = $1) AS pins",
            "before-harbour",
        )
        assert counts is not None and (counts["sections"], counts["pins"]) == (1, 0)  # pinned late
    # The words of what was left out are in no statistic: the word ranking is the branch's.
    assert not await saga.pool.fetchval(
        "SELECT count(*) FROM word_postings WHERE campaign_id = $1 AND lexeme = 'harbour'",
        "before-harbour",
    )

    view = View(branch, None, embedder)
    found = await view.search_sessions("the harbour guild and the drowned city", TEN)
    assert found.results and all(hit.session_id == FIRST for hit in found.results)
    facts = await view.search_facts("where is the key hidden", TEN)
    assert RETCONNED in [hit.text for hit in facts.results]
    with pytest.raises(NotFoundError):
        await view.session_summary(LATER)


async def test_a_fork_at_the_last_session_keeps_everything(saga: Database) -> None:
    fork = await fork_campaign(saga, CAMPAIGN, "all-of-it", at_session=LATER)
    assert fork.sessions_left_out == ()
    assert fork.rows == (await fork_campaign(saga, CAMPAIGN, "again")).rows


def test_the_fork_point_cuts_when_the_next_session_was_created() -> None:
    from datetime import UTC, datetime

    days = [datetime(2026, 1, day, tzinfo=UTC) for day in (1, 8, 3)]
    sessions = list(zip(["a", "b", "c"], days, strict=True))
    point = fork_point(sessions, "a")
    assert (point.kept, point.later, point.cut) == (("a",), ("b", "c"), days[2])
    assert fork_point(sessions, None).cut is None
    with pytest.raises(NotFoundError, match="--at-session: no session 'z'"):
        fork_point(sessions, "z")


async def test_a_fork_refuses_a_taken_or_invalid_id_and_an_unknown_parent(saga: Database) -> None:
    with pytest.raises(ConflictError, match="Campaign 'ashfall' exists already"):
        await fork_campaign(saga, CAMPAIGN, CAMPAIGN)
    with pytest.raises(InvalidInputError, match="a campaign id is"):
        await fork_campaign(saga, CAMPAIGN, "no spaces")
    with pytest.raises(NotFoundError, match="No campaign 'nowhere'"):
        await fork_campaign(saga, "nowhere", "x")
    with pytest.raises(NotFoundError, match="--at-session"):
        await fork_campaign(saga, CAMPAIGN, "x", at_session="s9")
    assert [c["id"] for c in await saga.pool.fetch("SELECT id FROM campaigns")] == [CAMPAIGN]


async def test_the_lineage_is_the_tree_from_the_oldest_ancestor(saga: Database) -> None:
    await fork_campaign(saga, CAMPAIGN, "east", at_session=FIRST)
    await fork_campaign(saga, "east", "east-2")
    await fork_campaign(saga, CAMPAIGN, "west")
    tree = await branch_tree(saga, "east-2")

    def shape(branch: Branch) -> object:
        return {branch.id: [shape(child) for child in branch.children]}

    assert shape(tree) == {CAMPAIGN: [{"east": [{"east-2": []}]}, {"west": []}]}
    east = tree.find("east")
    assert east is not None and (east.forked_from, east.forked_at_session) == (CAMPAIGN, FIRST)
    assert tree == await branch_tree(saga, CAMPAIGN)
    with pytest.raises(NotFoundError):
        await branch_tree(saga, "nowhere")


def test_a_link_to_a_campaign_gone_ends_the_walk_up() -> None:
    campaigns = [
        Branch(id="b", name="B", forked_from="gone", forked_at_session=None, forked_at=None),
        Branch(id="c", name="C", forked_from="b", forked_at_session=None, forked_at=None),
    ]
    assert lineage_tree(campaigns, "c").id == "b"


async def test_a_parent_with_branches_is_deleted_only_as_asked(saga: Database) -> None:
    await fork_campaign(saga, CAMPAIGN, "east")
    await fork_campaign(saga, "east", "east-2")
    with pytest.raises(ConflictError, match=r"has branches \(east-2\)"):
        await delete_campaign(saga, "east")
    kept = await delete_campaign(saga, "east", "keep")
    assert kept.branches_kept == ("east-2",)
    orphan = await branch_tree(saga, "east-2")
    assert (orphan.id, orphan.forked_from, orphan.children) == ("east-2", None, ())
    assert orphan.forked_at is not None  # it was forked; its parent is gone

    await fork_campaign(saga, CAMPAIGN, "west")
    await fork_campaign(saga, "west", "west-2")
    gone = await delete_campaign(saga, CAMPAIGN, "delete")
    assert gone.branches_deleted == ("west", "west-2")
    left = await saga.pool.fetch("SELECT id, forked_from FROM campaigns ORDER BY id")
    assert [tuple(row) for row in left] == [("east-2", None)]


async def test_a_branch_deleted_and_forked_again_is_never_served_from_the_old_ones_caches(
    saga: Database, embedder: WordLlamaEmbedder
) -> None:
    await fork_campaign(saga, CAMPAIGN, "what-if")
    memory = CampaignMemory(saga, "what-if")  # a server's, kept across the deletion
    view = View(memory, "mira", embedder)
    assert (await view.query_entities(TEN, clamp(1, 3), name="The Pale King")).entities
    await delete_campaign(saga, "what-if")
    # Forked again the same way, its counters would read as the old branch's did.
    await fork_campaign(saga, CAMPAIGN, "what-if", at_session=FIRST)
    assert not (await view.query_entities(TEN, clamp(1, 3), name="The Pale King")).entities
    assert PALE_KING not in {e.id for e in await memory.known_entities()}
