"""Deleting a campaign, a session or a line leaves no trace in any table, index or cache
(storage/deletion.py, pipeline/forget.py), and waits for no recorder: it refuses."""

from __future__ import annotations

from datetime import UTC, datetime

import anyio
import pytest

from glyphoxa_mcp.app import App
from glyphoxa_mcp.config import Settings
from glyphoxa_mcp.db.change_feed import Change, listening
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import ConflictError, NotFoundError
from glyphoxa_mcp.pipeline.chunking import passages
from glyphoxa_mcp.pipeline.forget import forget_line
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder
from glyphoxa_mcp.recording.recorder import Recorder
from glyphoxa_mcp.recording.utterances import SpokenUtterance
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.storage.deletion import (
    clear_summary_flag,
    delete_campaign,
    delete_session,
    remove_line,
    summaries_to_review,
)
from glyphoxa_mcp.storage.forking import fork_campaign
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View
from tests.storage.saga_fixtures import (
    CAMPAIGN,
    FIRST,
    FORGOTTEN,
    FORGOTTEN_WORDS,
    LATER,
    LATER_FACTS,
    RETCON,
    RETCONNED,
)

TEN = clamp(10, 10)
SELECT_TABLES = """
SELECT c.relname::text AS name,
       EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'campaign_id')
           AS by_campaign
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
ORDER BY 1
"""


async def rows_holding(db: Database, text: str, campaign: str | None = None) -> dict[str, int]:
    """Per table of the catalog, the rows holding `text` anywhere (any column, any case):
    of `campaign` only when given (tables naming no campaign are read whole)."""
    found = {}
    for table in await db.pool.fetch(SELECT_TABLES):
        name = table["name"]
        of_campaign = "true"
        if campaign is not None:
            key = "campaign_id" if table["by_campaign"] else "id" if name == "campaigns" else None
            of_campaign = f"x.{key} = $2" if key else "true"
        count = await db.pool.fetchval(
            f"SELECT count(*) FROM {name} x "
            f"WHERE to_jsonb(x)::text ILIKE '%' || $1::text || '%' AND {of_campaign}",
            *([text, campaign] if campaign is not None and "$2" in of_campaign else [text]),
        )
        if count:
            found[name] = count
    return found


async def word_statistics_are_those_of_the_rows(db: Database, campaign: str) -> None:
    """The BM25 statistics and postings (sql/024) are exactly what the rows left make."""
    sources = {
        "e": "SELECT id, tsv, NOT dm_only AS counted FROM session_entries WHERE campaign_id = $1",
        "c": "SELECT id, tsv, NOT dm_only AS counted FROM chunks WHERE campaign_id = $1",
        "f": "SELECT id, tsv, superseded_by IS NULL AND glyphoxa_visible(secret, known_by, '')"
        " AS counted FROM facts WHERE campaign_id = $1",
    }
    for collection, rows in sources.items():
        expected = await db.pool.fetch(
            f"""
            WITH r AS ({rows}), words AS (SELECT r.*, t.lexeme FROM r, unnest(r.tsv) t)
            SELECT (SELECT count(*) FILTER (WHERE counted) FROM r) AS documents,
                   (SELECT coalesce(sum(length(tsv)) FILTER (WHERE counted), 0) FROM r) AS total,
                   array(SELECT lexeme || ':' || count(*) FROM words WHERE counted
                         GROUP BY lexeme ORDER BY lexeme) AS frequencies,
                   array(SELECT lexeme || ':' || id FROM words ORDER BY 1) AS postings
            """,
            campaign,
        )
        stored = await db.pool.fetch(
            """
            SELECT coalesce((SELECT documents FROM word_collections
                             WHERE campaign_id = $1 AND collection::text = $2), 0) AS documents,
                   coalesce((SELECT total_length FROM word_collections
                             WHERE campaign_id = $1 AND collection::text = $2), 0) AS total,
                   array(SELECT lexeme || ':' || documents FROM word_frequencies
                         WHERE campaign_id = $1 AND collection::text = $2 ORDER BY lexeme)
                       AS frequencies,
                   array(SELECT lexeme || ':' || row_id FROM word_postings
                         WHERE campaign_id = $1 AND collection::text = $2 ORDER BY 1) AS postings
            """,
            campaign,
            collection,
        )
        assert dict(stored[0]) == dict(expected[0]), collection


async def references_to_line(db: Database, entry_id: int) -> dict[str, int]:
    """Per table and column the catalog says refers to a line (a foreign key into
    session_entries), the rows referring to `entry_id`."""
    columns = await db.pool.fetch(
        """
        SELECT c.conrelid::regclass::text AS table_name, a.attname::text AS column_name
        FROM pg_constraint c
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
        WHERE c.contype = 'f' AND c.confrelid = 'session_entries'::regclass
          AND a.attname <> 'campaign_id'
        """
    )
    found = {}
    for row in columns:
        table, column = row["table_name"], row["column_name"]
        count = await db.pool.fetchval(
            f'SELECT count(*) FROM {table} WHERE "{column}" = $1', entry_id
        )
        found[f"{table}.{column}"] = count
    return found


async def forgotten_line_id(db: Database) -> int:
    entry_id: int = await db.pool.fetchval(
        "SELECT id FROM session_entries WHERE campaign_id = $1 AND text = $2", CAMPAIGN, FORGOTTEN
    )
    return entry_id


async def test_deleting_a_campaign_leaves_no_row_naming_it_and_its_branches_stand(
    saga: Database,
) -> None:
    await fork_campaign(saga, CAMPAIGN, "survivor", name="Survivor")
    before = await saga.pool.fetchval(
        "SELECT count(*) FROM session_entries WHERE campaign_id = 'survivor'"
    )
    assert await rows_holding(saga, CAMPAIGN)  # it is everywhere first
    deleted = await delete_campaign(saga, CAMPAIGN, "keep")
    assert (deleted.sessions, deleted.lines, deleted.branches_kept) == (2, 10, ("survivor",))
    assert await rows_holding(saga, CAMPAIGN) == {}
    assert (
        await saga.pool.fetchval(
            "SELECT count(*) FROM session_entries WHERE campaign_id = 'survivor'"
        )
        == before
    )
    await word_statistics_are_those_of_the_rows(saga, "survivor")
    with pytest.raises(NotFoundError, match="No campaign 'ashfall'"):
        await delete_campaign(saga, CAMPAIGN)


async def test_deleting_a_session_leaves_no_row_of_the_campaign_naming_it(
    saga: Database, embedder: WordLlamaEmbedder
) -> None:
    memory = CampaignMemory(saga, CAMPAIGN)  # a server's, with its caches
    view = View(memory, None, embedder)
    assert f"episode-{LATER}" in {e.id for e in await memory.known_entities()}
    assert (await view.search_sessions("the Pale King and the drowned city", TEN)).results
    participations = await saga.pool.fetchval(
        "SELECT count(*) FROM relationships WHERE campaign_id = $1 "
        "AND provenance ->> 'session_id' = $2",
        CAMPAIGN,
        LATER,
    )

    deleted = await delete_session(saga, CAMPAIGN, LATER)
    assert deleted.model_dump(exclude={"campaign_id", "session_id", "passages"}) == {
        "lines": 4,
        "facts_deleted": 2,  # owing the guild, the Pale King's city
        "relationships_deleted": participations,
        "facts_kept": 1,  # the northern war: the DM confirmed it
        "relationships_kept": 0,
        "episode_deleted": True,
        "proposals_deleted": 1,
    }
    assert await rows_holding(saga, LATER, CAMPAIGN) == {}
    kept = await saga.pool.fetchrow(
        "SELECT session_id, provenance FROM facts WHERE campaign_id = $1 AND text = $2",
        CAMPAIGN,
        LATER_FACTS[1],
    )
    assert kept is not None and kept["session_id"] is None
    assert kept["provenance"]["dm_confirmed"] and kept["provenance"]["session_id"] is None
    await word_statistics_are_those_of_the_rows(saga, CAMPAIGN)
    assert [s.id for s in await memory.sessions.list()] == [FIRST]
    # The server's caches read the entities again: the episode is gone from them.
    assert f"episode-{LATER}" not in {e.id for e in await memory.known_entities()}
    found = await view.search_sessions("the Pale King and the drowned city", TEN)
    assert all(hit.session_id == FIRST for hit in found.results)
    with pytest.raises(NotFoundError, match=f"No session '{LATER}'"):
        await delete_session(saga, CAMPAIGN, LATER)


async def test_forgetting_a_line_leaves_no_word_of_it_and_a_view_made_before_never_shows_it(
    saga: Database, embedder: WordLlamaEmbedder
) -> None:
    line = await forgotten_line_id(saga)
    memory = CampaignMemory(saga, CAMPAIGN)
    views = [View(memory, None, embedder), View(memory, "mira", embedder)]
    for view in views:
        heard = await view.search_sessions(" ".join(FORGOTTEN_WORDS), TEN)
        assert any(line in hit.entry_ids for hit in heard.results), view.label
        await view.scope()  # built and cached, as a server has it
    # The hot context kept for an outage quotes the line, until the removal is heard.
    await views[1].hot_context("mira", FIRST)
    kept_for_outage = views[1].last_hot_context("mira", FIRST)
    assert kept_for_outage is not None and "xylophonist" in kept_for_outage.model_dump_json()
    subscriptions = HotSubscriptions(memory, "mira", on_removal=views[1].forget_last_hot_contexts)
    # Extraction cited it for a fact (and the DM's retcon of it).
    keyed = next(f for f in await memory.graph.current_facts() if f.text == RETCON)
    assert keyed.provenance.entry_id == line
    # Its summary was the LLM's: written again offline, to be asked of the LLM again.
    session = await memory.sessions.get(FIRST)
    assert session.summary is not None and FORGOTTEN in session.summary
    await memory.sessions.set_summary(FIRST, session.summary, "llm")
    # Hot-context subscribers hear that the session's lines changed.
    told = anyio.Event()

    async def hear(change: Change) -> None:
        await subscriptions.on_change(change)
        if change == Change(campaign=CAMPAIGN, kind="transcript", session=FIRST, removed=True):
            told.set()

    async with listening(saga.location.dsn, hear):
        forgotten = await forget_line(saga, CAMPAIGN, line, embedder)
        with anyio.fail_after(10):
            await told.wait()

    assert (forgotten.session_id, forgotten.summary, forgotten.llm_pending) == (
        FIRST,
        "rewritten",
        True,
    )
    assert forgotten.passages_removed == 3 and forgotten.passages_pending is None
    for word in FORGOTTEN_WORDS:
        assert await rows_holding(saga, word, CAMPAIGN) == {}, word
    # Nor their lexemes, as the word ranking stems them.
    assert not await saga.pool.fetchval(
        "SELECT count(*) FROM word_postings p, unnest(to_tsvector('english', $2)) t "
        "WHERE p.campaign_id = $1 AND p.lexeme = t.lexeme",
        CAMPAIGN,
        " ".join(FORGOTTEN_WORDS),
    )
    assert not await saga.pool.fetchval(
        "SELECT count(*) FROM session_entries WHERE campaign_id = $1 AND id = $2", CAMPAIGN, line
    )
    assert not await saga.pool.fetchval(
        "SELECT count(*) FROM chunks WHERE campaign_id = $1 AND $2::bigint = ANY(entry_ids)",
        CAMPAIGN,
        line,
    )
    assert not await saga.pool.fetchval(
        "SELECT count(*) FROM word_postings WHERE campaign_id = $1 AND collection = 'e' "
        "AND row_id = $2",
        CAMPAIGN,
        line,
    )
    await word_statistics_are_those_of_the_rows(saga, CAMPAIGN)
    # The facts extracted from it stay, citing no line any more.
    assert await references_to_line(saga, line) == {
        "facts.source_entry_id": 0,
        "relationships.source_entry_id": 0,
    }
    kept = await memory.curation.history(keyed.id)
    assert [(f.text, f.provenance.entry_id) for f in kept] == [(RETCONNED, None), (RETCON, None)]
    # The passages are those the lines left make.
    left = await memory.log.entries(FIRST)
    stored = await memory.index.stored_hashes(FIRST)
    assert len(left) == 5 and len(stored) == len(passages(left)) == forgotten.passages_added + 1
    session = await memory.sessions.get(FIRST)
    assert (session.summary_source, session.llm_pending) == ("extractive", True)
    assert await summaries_to_review(saga, CAMPAIGN) == [FIRST]
    episode = await memory.graph.get_entity(f"episode-{FIRST}")
    # A witnessed campaign's episode holds no summary (every NPC may know the episode).
    assert "summary" not in episode.attributes

    # Neither by words nor by meaning, in the views made before.
    for view in views:
        for query in (" ".join(FORGOTTEN_WORDS), FORGOTTEN):
            answer = await view.search_sessions(query, TEN)
            assert all(line not in hit.entry_ids for hit in answer.results), (view.label, query)
            assert all("xylophonist" not in hit.text for hit in answer.results)
    assert views[1].last_hot_context("mira", FIRST) is None
    assert "xylophonist" not in (await views[1].hot_context("mira", FIRST)).model_dump_json()

    # Reviewed: the flag clears, as it does when the summary is written again.
    await clear_summary_flag(saga, CAMPAIGN, FIRST)
    assert await summaries_to_review(saga, CAMPAIGN) == []
    with pytest.raises(NotFoundError, match=f"No line line:{line} in campaign"):
        await forget_line(saga, CAMPAIGN, line, embedder)


async def test_the_dms_own_summary_is_kept_for_the_dm_to_review(
    saga: Database, embedder: WordLlamaEmbedder
) -> None:
    memory = CampaignMemory(saga, CAMPAIGN)
    await memory.sessions.set_summary(FIRST, "The party met Mira at the Kettle.", "dm")
    forgotten = await forget_line(saga, CAMPAIGN, await forgotten_line_id(saga), embedder)
    assert (forgotten.summary, forgotten.llm_pending) == ("kept", False)
    session = await memory.sessions.get(FIRST)
    assert (session.summary, session.summary_source) == ("The party met Mira at the Kettle.", "dm")
    assert await summaries_to_review(saga, CAMPAIGN) == [FIRST]
    # The DM writing the summary again is the review.
    await memory.sessions.set_summary(FIRST, "The party met Mira.", "dm")
    assert await summaries_to_review(saga, CAMPAIGN) == []


async def test_nothing_is_deleted_while_a_recorder_writes_into_it(
    saga: Database, embedder: WordLlamaEmbedder
) -> None:
    app = App(Settings(), saga, embedder, chat=None)
    said = SpokenUtterance(
        speaker_id="p1", speaker_name="Kael", text="We sail at dawn.", timestamp=datetime.now(UTC)
    )
    async with anyio.create_task_group() as tasks:
        recorder = Recorder(app, tasks)
        await recorder.start(CAMPAIGN, "live")
        (recorded,) = await recorder.append(CAMPAIGN, "live", [said])
        await recorder.searchable(CAMPAIGN, "live")
        with pytest.raises(ConflictError, match="Session 'live' of campaign 'ashfall' is being"):
            await delete_session(saga, CAMPAIGN, "live")
        with pytest.raises(ConflictError, match="is being recorded into"):
            await remove_line(saga, CAMPAIGN, recorded.entry_id)
        with pytest.raises(ConflictError, match=r"Campaign 'ashfall' .*\(session 'live'\)"):
            await delete_campaign(saga, CAMPAIGN)
        # What the recorder does not write into is deleted as usual.
        assert (await delete_session(saga, CAMPAIGN, LATER)).lines == 4
        tasks.cancel_scope.cancel()
    assert (await delete_session(saga, CAMPAIGN, "live")).lines == 1
    assert (await delete_campaign(saga, CAMPAIGN)).sessions == 1
