"""The word ranking over maintained postings: the same rows and scores as scoring every
matching row, BM25 by the book, statistics that follow every write and count nothing hidden,
and a cost that does not follow how many rows hold a common word."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.models import NewChunk, NewEntry, NewSession, SearchFilters
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.storage import word_ranking
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.sql_parts import Params, chunk_conditions, entry_conditions
from glyphoxa_mcp.storage.word_ranking import WordSearch, rank_by_words
from tests.storage.test_witnesses import sample as witnessed_sample

START = datetime(2026, 3, 14, 19, 0, tzinfo=UTC)
WORDS = (  # noqa: SIM905 (a paragraph of words reads better than a list)
    "caravan wagon road bridge ember lantern tide crates cellar relic prayer bells candles "
    "plague fever herbs siege banners harvest barley drought hull reef salvage vault keys "
    "dragon hoard ritual idol joust lance dowry ledger silver miner tunnel thunder ambush "
    "outlaws ransom runes shard feud duel hex potion ghoul tomb stalls spices warden chains"
).split()
SPEAKERS = ("Mira", "Tomas", "Grimjaw")
# What a player or an NPC reads: no DM-only lines.
PLAYERS = SearchFilters(reader="npc:any")


def _corpus(size: int, seed: int) -> list[NewEntry]:
    """Lines of 3-12 words drawn with Zipf-like weights: a few words in most lines."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    lines = []
    for i in range(size):
        words = rng.choices(WORDS, weights, k=rng.randint(3, 12))
        lines.append(
            NewEntry(
                speaker_id=(speaker := rng.choice(SPEAKERS)).lower(),
                speaker_name=speaker,
                text=" ".join(words) + ".",
                spoken_at=START + timedelta(seconds=i),
            )
        )
    return lines


def _search(memory: CampaignMemory, query: str, k: int, filters: SearchFilters) -> Any:
    params = Params(memory.campaign_id)
    text = params.add(query)
    conditions = entry_conditions(filters, params, "e")
    limit = params.add(k)
    return params, dict(
        table="session_entries", alias="e", columns="e.id", conditions=conditions,
        query=text, limit=limit, k=k,
    )  # fmt: skip


async def _ranked(
    db: Database, memory: CampaignMemory, query: str, k: int, filters: SearchFilters, **how: Any
) -> list[tuple[int, float]]:
    params, fields = _search(memory, query, k, filters)
    rows = await rank_by_words(db.pool, WordSearch(**fields, **how), params)
    return [(row["id"], row["rank"]) for row in rows]


def _same_ranking(got: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    """Equal scores in order; the same rows, except among ties at the cut."""
    assert [r for _, r in got] == pytest.approx([r for _, r in expected], rel=1e-9)
    if expected:
        cut = expected[-1][1]
        assert {i for i, r in got if r > cut + 1e-9} == {i for i, r in expected if r > cut + 1e-9}


class _CountingPool:
    def __init__(self, pool: Any) -> None:
        self.pool, self.statements = pool, 0

    async def fetch(self, sql: str, *args: Any) -> Any:
        self.statements += 1
        return await self.pool.fetch(sql, *args)


@pytest.fixture
async def corpus(db: Database, memory: CampaignMemory) -> list[int]:
    ids = await memory.log.append_many("s1", _corpus(1_500, seed=7))
    # A few lines only the DM may read.
    await memory.log.set_dm_only(ids[::50], True)
    return ids


# Each pass on its own: the first pass alone where it can end; the second pass reading only
# the rarer words and counting the others row by row, a few rows at a time; and reading
# every word whole.
# With the statements 40 searches must at least have sent to take that way.
PASSES = {
    "as configured": ({}, 40),
    "counting common words": ({"FIRST_DEPTH": 2, "FIRST_SCORED": 2, "READ_WHOLE": 0}, 2 * 40),
    "reading every word": ({"FIRST_DEPTH": 2, "READ_WHOLE": 10**9}, 60),
}


@pytest.mark.parametrize(("passes", "at_least"), PASSES.values(), ids=PASSES.keys())
# Filtering first: the second pass keeps only the rows the filters keep before it chooses
# which to score (what an NPC reads in a witnessed campaign).
@pytest.mark.parametrize("filter_first", [False, True], ids=["filtered last", "filtered first"])
@pytest.mark.slow
async def test_reading_postings_ranks_as_scoring_every_matching_row(
    db: Database,
    memory: CampaignMemory,
    corpus: list[int],
    passes: dict[str, int],
    at_least: int,
    filter_first: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in passes.items():
        monkeypatch.setattr(word_ranking, name, value)
    rng = random.Random(11)
    statements = 0
    for _ in range(40):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 4)))
        k = rng.choice((1, 5, 10, 40))
        filters = rng.choice((SearchFilters(), PLAYERS, SearchFilters(speaker_ids=("tomas",))))
        params, fields = _search(memory, query, k, filters)
        counting = _CountingPool(db.pool)
        search = WordSearch(**fields, filter_first=filter_first)
        rows = await rank_by_words(counting, search, params)  # type: ignore[arg-type]
        statements += counting.statements
        everything = await _ranked(db, memory, query, k, filters, selective=True)
        _same_ranking([(row["id"], row["rank"]) for row in rows], everything)
    assert statements >= at_least


async def _lexemes(db: Database, memory: CampaignMemory) -> dict[int, tuple[bool, Counter[str]]]:
    rows = await db.pool.fetch(
        """SELECT e.id, e.dm_only, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf
           FROM session_entries e, unnest(e.tsv) u WHERE e.campaign_id = $1""",
        memory.campaign_id,
    )
    found: dict[int, tuple[bool, Counter[str]]] = {}
    for row in rows:
        found.setdefault(row["id"], (row["dm_only"], Counter()))[1][row["lexeme"]] = row["tf"]
    return found


def _bm25(rows: dict[int, tuple[bool, Counter[str]]], terms: list[str]) -> dict[int, float]:
    """BM25 by the book (k1 1.2, b 0.75, Lucene's IDF), statistics over what anyone may
    read, scoring every row that holds a term."""
    counted = [words for dm_only, words in rows.values() if not dm_only]
    documents = len(counted)
    average = sum(len(words) for words in counted) / documents
    holding = Counter(term for words in counted for term in words)
    scores = {}
    for row_id, (_, words) in rows.items():
        score = 0.0
        for term in terms:
            if tf := words.get(term):
                idf = math.log(
                    1 + max(documents - holding[term] + 0.5, 0.5) / (holding[term] + 0.5)
                )
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(words) / average))
        if score:
            scores[row_id] = score
    return scores


async def test_scores_are_bm25_over_what_anyone_may_read(
    db: Database, memory: CampaignMemory, corpus: list[int]
) -> None:
    rows = await _lexemes(db, memory)
    for query in ("caravan ember", "dragon hoard tunnel", "ghoul", "bells bells candles"):
        terms = [
            row["l"]
            for row in await db.pool.fetch(
                "SELECT unnest(tsvector_to_array(to_tsvector('english', $1))) AS l", query
            )
        ]
        expected = sorted(_bm25(rows, terms).items(), key=lambda item: (-item[1], item[0]))
        got = await _ranked(db, memory, query, 20, SearchFilters())
        _same_ranking(got, expected[:20])


async def test_statistics_follow_corrections_dm_only_and_deletes(
    db: Database, memory: CampaignMemory, other_campaign: CampaignMemory
) -> None:
    ids = await memory.log.append_many("s1", _corpus(200, seed=3))
    await other_campaign.log.append_many("s1", _corpus(50, seed=4))
    await memory.log.set_corrected([(ids[0], "The ember glows over the hidden vault.", [])])
    await memory.log.set_dm_only(ids[1:40], True)
    await memory.log.set_dm_only(ids[1:20], False)
    await memory.sessions.upsert(NewSession(id="s2"))
    await memory.log.append_many("s2", _corpus(30, seed=5))
    await db.pool.execute(
        "DELETE FROM sessions WHERE campaign_id = $1 AND id = 's2'", memory.campaign_id
    )

    async def maintained() -> list[Any]:
        return [
            [tuple(row) for row in await db.pool.fetch(query, memory.campaign_id)]
            for query in (
                "SELECT documents, total_length FROM word_collections"
                " WHERE campaign_id = $1 AND collection = 'e'",
                "SELECT lexeme, documents FROM word_frequencies"
                " WHERE campaign_id = $1 AND collection = 'e' ORDER BY lexeme",
                "SELECT lexeme, row_id, frequency, length, audience FROM word_postings"
                " WHERE campaign_id = $1 AND collection = 'e' ORDER BY lexeme, row_id",
            )
        ]

    before = await maintained()
    # Built again from nothing, from the rows as they are now.
    await db.pool.execute(
        """DELETE FROM word_postings WHERE campaign_id = $1;
           DELETE FROM word_frequencies WHERE campaign_id = $1;
           DELETE FROM word_collections WHERE campaign_id = $1;""".replace("$1", "'%s'")
        % ((memory.campaign_id,) * 3)
    )
    await db.pool.execute(
        """SELECT glyphoxa_words_add('e', array_agg(
               (campaign_id, id, tsv, NOT dm_only)::glyphoxa_word_row))
           FROM session_entries WHERE campaign_id = $1""",
        memory.campaign_id,
    )
    assert await maintained() == before
    assert before[0][0][0] == 200 - 20

    await db.pool.execute("DELETE FROM campaigns WHERE id = $1", memory.campaign_id)
    for table in (
        "word_postings",
        "word_frequencies",
        "word_collections",
        "word_audiences",
        "word_readers",
    ):
        left = await db.pool.fetchval(
            f"SELECT count(*) FROM {table} WHERE campaign_id = $1", memory.campaign_id
        )
        assert left == 0, table
    assert await db.pool.fetchval(
        "SELECT count(*) FROM word_postings WHERE campaign_id = $1", other_campaign.campaign_id
    )


async def test_a_dm_only_line_changes_no_score_a_player_sees(
    db: Database, memory: CampaignMemory
) -> None:
    await memory.log.append_many("s1", _corpus(300, seed=9))
    before = await _ranked(db, memory, "dragon vault", 10, PLAYERS)
    secret = [
        NewEntry(
            speaker_id="dm", speaker_name="DM", text=f"The dragon sleeps in vault {i}.",
            spoken_at=START + timedelta(hours=1, seconds=i),
        )
        for i in range(40)
    ]  # fmt: skip
    hidden = await memory.log.append_many("s1", secret)
    await memory.log.set_dm_only(hidden, True)
    assert await _ranked(db, memory, "dragon vault", 10, PLAYERS) == before


async def test_a_common_word_costs_no_more_reading(db: Database, memory: CampaignMemory) -> None:
    common = [
        NewEntry(
            speaker_id="mira", speaker_name="Mira", text=f"The caravan waits at milestone {i}.",
            spoken_at=START + timedelta(seconds=i),
        )
        for i in range(3_000)
    ]  # fmt: skip
    rare = [
        NewEntry(
            speaker_id="tomas", speaker_name="Tomas", text=text,
            spoken_at=START + timedelta(hours=2, seconds=i),
        )
        for i, text in enumerate(
            ("An ember glows in the caravan.", "The ember went out.", "Ember, caravan!")
        )
    ]  # fmt: skip
    await memory.log.append_many("s1", [*common, *rare])
    params, fields = _search(memory, "caravan ember", 10, SearchFilters())
    counting = _CountingPool(db.pool)
    rows = await rank_by_words(counting, WordSearch(**fields), params)  # type: ignore[arg-type]
    # One statement, reading FIRST_DEPTH postings of "caravan": not 3,000 rows.
    assert counting.statements == 1
    assert word_ranking.FIRST_DEPTH < 3_000
    texts = {entry.text for entry in await memory.log.get_many([row["id"] for row in rows[:3]])}
    assert texts == {entry.text for entry in rare}


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _first_pass(search: WordSearch, threshold: str) -> str:
    return word_ranking._read_best(search, word_ranking.FIRST_DEPTH)


def _second_pass(search: WordSearch, threshold: str) -> str:
    return word_ranking._read_essential(
        search, threshold, word_ranking.FIRST_SCORED, word_ranking.READ_WHOLE
    )


@pytest.mark.parametrize("statement", [_first_pass, _second_pass], ids=["first", "second"])
async def test_each_pass_is_planned_once_whatever_the_words_k_and_threshold(
    db: Database, memory: CampaignMemory, corpus: list[int], statement: Any
) -> None:
    """PostgreSQL keeps one plan for a statement run with other values only once the plan
    made without seeing them (generic) costs no more than those made with them (custom).
    The passes hide the query's words, k and the threshold from the planner, so that a plan
    made for given values costs what the generic plan does: after five runs, a pass is no
    longer planned at every call."""

    def search_for(query: str, k: int, threshold: float, npc: str | None) -> tuple[str, list[Any]]:
        params, fields = _search(memory, query, k, SearchFilters(reader=npc))
        search = WordSearch(**fields, reader=None if npc is None else params.add(npc))
        if statement is _first_pass:
            return statement(search, ""), params.values
        return statement(search, params.add(threshold)), params.values

    async def cost(sql: str, mode: str, values: list[Any]) -> float:
        """The cost of the plan PostgreSQL makes for the prepared pass: for these values
        (a custom plan), or for none (the generic plan it would keep)."""
        given = ", ".join(str(v) if isinstance(v, int | float) else _quoted(v) for v in values)
        async with db.pool.acquire() as conn, conn.transaction():
            await conn.execute(f"SET LOCAL plan_cache_mode = {mode}")
            await conn.execute(f"PREPARE pass AS {sql}")
            plan = await conn.fetchval(f"EXPLAIN (FORMAT JSON) EXECUTE pass({given})")
            await conn.execute("DEALLOCATE pass")
        return float(json.loads(plan)[0]["Plan"]["Total Cost"])

    # The DM (no conditions: how many rows k keeps shows in the cost) and an NPC.
    for npc in (None, "brannoch"):
        for query, k, threshold in (("caravan", 1, 0.5), ("ember lantern tide", 40, 3.0)):
            sql, values = search_for(query, k, threshold, npc)
            custom = await cost(sql, "force_custom_plan", values)
            assert custom == await cost(sql, "force_generic_plan", values)
    sql = search_for("caravan", 1, 0.5, "brannoch")[0]
    async with db.pool.acquire() as conn:
        for query in ("caravan ember", "tide", "relic bells", "ghoul tomb", "vault", "runes"):
            await conn.fetch(sql, *search_for(query, 10, 1.0, "brannoch")[1])
        runs = await conn.fetchrow(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1",
            sql,
        )
    assert runs is not None
    assert (runs["custom_plans"], runs["generic_plans"]) == (5, 1)


NPCS = ("brannoch", "ysolde", "berrit", "maelis")


async def _postings_astray(db: Database, campaign: str) -> list[tuple[Any, ...]]:
    """Postings of lines and passages whose audience is not who may read their row now."""
    rows = await db.pool.fetch(
        """SELECT p.collection, p.row_id, p.lexeme, a.dm_only AS a_dm_only,
                  a.heard_by AS a_heard_by, p.audience,
                  coalesce(e.dm_only, c.dm_only) AS dm_only,
                  CASE p.collection WHEN 'e' THEN e.heard_by ELSE c.heard_by END AS heard_by
           FROM word_postings p
                LEFT JOIN word_audiences a ON a.campaign_id = p.campaign_id AND a.id = p.audience
                LEFT JOIN session_entries e
                  ON p.collection = 'e' AND e.campaign_id = p.campaign_id AND e.id = p.row_id
                LEFT JOIN chunks c
                  ON p.collection = 'c' AND c.campaign_id = p.campaign_id AND c.id = p.row_id
           WHERE p.campaign_id = $1 AND p.collection IN ('c', 'e')""",
        campaign,
    )
    astray = []
    for row in rows:
        everyone = not row["dm_only"] and row["heard_by"] is None
        if everyone:
            right = row["audience"] is None
        else:
            right = (row["a_dm_only"], row["a_heard_by"]) == (row["dm_only"], row["heard_by"])
        if not right:
            astray.append(tuple(row))
    return astray


async def _readers_astray(db: Database, campaign: str) -> list[tuple[Any, ...]]:
    """NPCs whose audiences, as kept, are not those the rule lets them read."""
    rows = await db.pool.fetch(
        """WITH npcs AS (SELECT DISTINCT h AS npc_id FROM word_audiences, unnest(heard_by) h
                         WHERE campaign_id = $1),
                ruled AS (SELECT n.npc_id, coalesce(array_agg(a.id ORDER BY a.id)
                                     FILTER (WHERE glyphoxa_may_read(a.dm_only, a.heard_by,
                                                                     n.npc_id)), '{}') AS ids
                          FROM npcs n CROSS JOIN word_audiences a WHERE a.campaign_id = $1
                          GROUP BY n.npc_id),
                kept AS (SELECT r.npc_id, array(SELECT i FROM generate_series(0,
                                    length(r.audiences) - 1) i
                                    WHERE get_bit(r.audiences, i) = 1) AS ids
                         FROM word_readers r WHERE r.campaign_id = $1)
           SELECT coalesce(r.npc_id, k.npc_id), r.ids, k.ids
           FROM ruled r FULL JOIN kept k USING (npc_id)
           WHERE r.ids IS DISTINCT FROM k.ids AND cardinality(coalesce(r.ids, k.ids)) > 0""",
        campaign,
    )
    return [tuple(row) for row in rows]


@pytest.mark.slow
async def test_postings_follow_who_may_read_their_rows_and_rank_as_scoring_what_they_may(
    db: Database,
) -> None:
    """Whatever scenes, speakers, the DM's hearers, DM-only lines and the campaign's setting
    do to who hears a line or passage, its postings carry it, and a reader's ranking read
    from its own postings is the ranking of every row it may read."""
    memory = await witnessed_sample(db)
    rng = random.Random(23)
    minute = 0
    entry_ids: list[int] = []
    chunk_started = START
    for step in range(14):
        lines = []
        for _ in range(rng.randint(4, 9)):
            minute += 1
            npc = rng.choice((*NPCS, None, None))
            words = " ".join(rng.choices(WORDS[:20], k=rng.randint(3, 8)))
            lines.append(
                NewEntry(
                    speaker_id=npc or "kael", speaker_name=npc or "Kael", npc_id=npc,
                    text=f"{words}.", spoken_at=START + timedelta(minutes=minute),
                )
            )  # fmt: skip
        added = await memory.log.append_many("s1", lines)
        entry_ids += added
        await memory.index.upsert(
            [
                NewChunk(
                    session_id="s1",
                    content="\n".join(line.text for line in lines),
                    embedding=[0.5] * 4,
                    entry_ids=tuple(added),
                    started_at=chunk_started,
                    ended_at=START + timedelta(minutes=minute),
                )
            ]
        )
        chunk_started = START + timedelta(minutes=minute)
        change = step % 4
        if change == 0:
            at = rng.randint(0, minute)
            present = tuple(rng.sample(NPCS, rng.randint(0, 3)))
            await memory.scenes.record(
                [Scene(session_id="s1", started_at=START + timedelta(minutes=at), present=present)]
            )
        elif change == 1:
            await db.pool.execute(
                "UPDATE session_entries SET heard_by_dm = $2 WHERE id = $1",
                rng.choice(entry_ids),
                sorted(rng.sample(NPCS, rng.randint(0, 2))),
            )
        elif change == 2:
            await memory.log.set_dm_only(rng.sample(entry_ids, 2), rng.random() < 0.7)
        elif step == 7:
            await Campaigns(db).configure_knowledge("demo", knowledge=Knowledge.SHARED)
            assert await _postings_astray(db, "demo") == []
            await Campaigns(db).configure_knowledge("demo", knowledge=Knowledge.WITNESSED)
        assert await _postings_astray(db, "demo") == []
        assert await _readers_astray(db, "demo") == []

    audiences = await db.pool.fetchval(
        "SELECT count(DISTINCT audience) FROM word_postings WHERE campaign_id = 'demo'"
    )
    assert audiences > 3
    for reader in (*NPCS, "wendrith"):
        for _ in range(6):
            query = " ".join(rng.sample(WORDS[:20], rng.randint(1, 3)))
            k = rng.choice((1, 5, 20))
            for table, alias, conditions in (
                ("session_entries", "e", entry_conditions),
                ("chunks", "c", chunk_conditions),
            ):
                params = Params("demo")
                text = params.add(query)
                filters = SearchFilters(reader=reader)
                fields: dict[str, Any] = dict(
                    table=table, alias=alias, columns=f"{alias}.id",
                    conditions=conditions(filters, params, alias), query=text,
                    limit=params.add(k), k=k, filter_first=True, reader=params.add(reader),
                )  # fmt: skip
                own = await rank_by_words(db.pool, WordSearch(**fields), params)
                # Every row the conditions keep, scored: no posting is read.
                every = await rank_by_words(db.pool, WordSearch(**fields, selective=True), params)
                _same_ranking(
                    [(row["id"], row["rank"]) for row in own],
                    [(row["id"], row["rank"]) for row in every],
                )


async def test_audiences_numbered_by_two_transactions_at_once_stay_dense_and_right(
    db: Database,
) -> None:
    """Two transactions each give a line hearers no line had: the second waits for the
    first's numbering to commit, then numbers its own next, with no gap and no clash."""
    memory = await witnessed_sample(db)
    first, second = await memory.log.append_many(
        "s1", [said_at(1, "The caravan waits."), said_at(2, "The ember glows.")]
    )
    hear = "UPDATE session_entries SET heard_by_dm = $2 WHERE id = $1"
    async with db.pool.acquire() as one, db.pool.acquire() as other:
        numbering = one.transaction()
        await numbering.start()
        await one.execute(hear, first, ["brannoch", "maelis"])
        waiting = other.transaction()
        await waiting.start()
        async with anyio.create_task_group() as writers:
            writers.start_soon(other.execute, hear, second, ["berrit", "ysolde"])
            with anyio.fail_after(10):
                while not await db.pool.fetchval(
                    "SELECT count(*) FROM pg_locks WHERE pid = $1 AND NOT granted",
                    other.get_server_pid(),
                ):
                    await anyio.sleep(0.01)
            await numbering.commit()
        await waiting.commit()
    ids = [
        row["id"]
        for row in await db.pool.fetch(
            "SELECT id FROM word_audiences WHERE campaign_id = 'demo' ORDER BY id"
        )
    ]
    assert ids == list(range(len(ids)))
    hearings = {
        tuple(row["heard_by"])
        for row in await db.pool.fetch(
            "SELECT heard_by FROM word_audiences WHERE campaign_id = 'demo' AND NOT dm_only"
        )
    }
    assert {("brannoch", "maelis"), ("berrit", "ysolde")} <= hearings
    assert await _postings_astray(db, "demo") == []
    assert await _readers_astray(db, "demo") == []


def said_at(minute: int, text: str) -> NewEntry:
    return NewEntry(
        speaker_id="kael",
        speaker_name="Kael",
        text=text,
        spoken_at=START + timedelta(minutes=minute),
    )
