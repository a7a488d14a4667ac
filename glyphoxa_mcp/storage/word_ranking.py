"""Ranking rows by the query's words (BM25) over the postings kept at write time (sql/024).

Two passes, each one statement, neither reading a common word's postings whole:
- The best FIRST_DEPTH postings of each query word (highest weight first, from an index)
  give candidates. When no row left unread could still enter the top k (the threshold
  algorithm, with sql/024's `glyphoxa_bm25_bound` on what an unread posting can weigh), that
  is the answer: a query whose best rows hold its rarer words ends here. When the filters
  keep fewer than k of them, the pass reads deeper once (MAX_FIRST_DEPTH).
- Otherwise the k-th best score found is a threshold (MaxScore): a row reaching it must
  hold one of the words whose greatest weights add up to it, so only those words' postings
  are read, and a row's common words are counted only when it could still reach the top.

Scores are BM25 (k1 1.2, b 0.75) with the campaign's statistics, maintained on write: rows
and the average length in distinct lexemes, and each word's document frequency. Filters
choose which rows are returned, not how they are scored. A search whose filters keep only
a few rows reachable through an index (one session, some subjects) scores each of them
instead (`selective`).

Neither pass needs planning at every call: the query's text, k and the threshold reach them
through sub-selects the planner cannot look into (`_at_run_time`). A plan made for given
values then costs what the generic plan (made for none) does, and PostgreSQL uses the
generic plan from a prepared statement's sixth run on (its plan cache keeps one as soon as it
costs no more than the custom plans did). Planning took about as long as running a pass
(0.5-0.9 ms on the reference dataset), and those values never changed the plan's shape: each
word's postings are read through their index whichever words they are. The campaign and the
filters stay visible; where they move the estimates (campaigns of very different sizes in
one database), a pass is planned for each call, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from asyncpg import Pool, Record

from glyphoxa_mcp.storage.sql_parts import Params, or_tsquery, where

Collection = Literal["e", "c", "f", "l"]
TABLES: dict[str, Collection] = {
    "session_entries": "e",
    "chunks": "c",
    "facts": "f",
    "lore_sections": "l",
}
# Collections whose postings carry who may read their rows (sql/036).
AUDIENCES = frozenset({"e", "c"})

# Postings read first from each word's list, at the least.
FIRST_DEPTH = 64
# How deep the first pass reads again, at most, when the filters kept fewer than k of the
# rows it found (an NPC who witnessed a few scenes): without k rows there is no threshold,
# and the second pass would read the query's words' postings whole.
MAX_FIRST_DEPTH = 512
# A word held by no more rows than this has its postings read whole in the second pass
# (about 0.3 µs a posting) rather than counted row by row.
READ_WHOLE = 20_000
# Rows whose common words are counted first in the second pass, at the least.
FIRST_SCORED = 256
# What counting a row's words from its text costs, and reading one posting (µs).
COUNTING_COST = 10.0
READING_COST = 0.3
# Scores this close are a tie (float4 impacts round at about 6e-8): a row tied with the
# last of the top k may be left for another, which scoring every row would break by id.
TIE = 1e-6


@dataclass(frozen=True)
class WordSearch:
    """One ranking: the rows of `table` (as `alias`) of the campaign in `$1` that
    `conditions` keep, by the words of the query in the placeholder `query`, the best
    `k` (placeholder `limit`), returned with `columns` and their score as `rank`."""

    table: str
    alias: str
    columns: str
    conditions: Sequence[str]
    query: str
    limit: str
    k: int
    # The conditions keep few rows, found through an index: score them all.
    selective: bool = False
    # The conditions may drop most rows that hold the words (what an NPC may read in a
    # witnessed campaign): the second pass applies them before it chooses the rows to
    # score, rather than scoring rows it then drops.
    filter_first: bool = False
    # The placeholder of the NPC reading lines or passages: their postings are read only
    # where it may read them (their audiences, sql/036), so that what it cannot read sets no
    # threshold and is not scored. The conditions still decide which rows are returned.
    reader: str | None = None


async def rank_by_words(pool: Pool, search: WordSearch, params: Params) -> list[Record]:
    """The best rows for the search, best first, each with its `rank`."""
    if search.selective:
        return list(await pool.fetch(_score_all(search), *params.values))
    depth = max(FIRST_DEPTH, search.k)
    while True:
        rows = await pool.fetch(_read_best(search, depth), *params.values)
        if rows[0]["complete"]:
            return [row for row in rows if row["rank"] is not None]
        if rows[0]["threshold"] > 0 or not search.conditions or depth >= MAX_FIRST_DEPTH:
            break
        depth *= 8
    with_threshold = [*params.values, rows[0]["threshold"]]
    threshold = f"${len(with_threshold)}"
    scored, read_whole = max(FIRST_SCORED, search.k), READ_WHOLE
    while True:
        sql = _read_essential(search, threshold, scored, read_whole)
        rows = await pool.fetch(sql, *with_threshold)
        verdict = rows[0]
        if verdict["complete"]:
            return [row for row in rows if row["rank"] is not None]
        if verdict["hopeful"] * COUNTING_COST > verdict["unread_postings"] * READING_COST:
            # Cheaper to read the common words' postings than to count them row by row:
            # then every row's score is known from postings alone.
            read_whole = verdict["unread_postings"]
        scored *= 8


def _by_audience(search: WordSearch) -> bool:
    return search.reader is not None and TABLES[search.table] in AUDIENCES


def _heard(search: WordSearch, posting: str) -> str:
    """Condition: the reader may read the row of the posting at `posting` (TRUE for the DM
    and for collections without audiences). Needs `_with_audiences` in the FROM list."""
    if not _by_audience(search):
        return "TRUE"
    return f"glyphoxa_audience_heard(heard.mask, {posting}.audience)"


def _with_audiences(search: WordSearch) -> str:
    """What the reader may read of the audiences, joined as `heard`: a column, not a scalar
    subquery, so that `_heard` is inlined (about 0.1 µs a posting, not 2)."""
    return " CROSS JOIN audiences heard" if _by_audience(search) else ""


def _statistics(search: WordSearch, planned_once: bool = False) -> str:
    """The campaign's collection statistics, the query's words with their IDF, and what the
    reader may read of the campaign's audiences. `planned_once`: the query's text is read
    at run time (`_at_run_time`), not when the statement is planned."""
    collection = TABLES[search.table]
    query = _at_run_time(search.query, "text") if planned_once else search.query
    audiences = ""
    if _by_audience(search):
        audiences = f"""
        audiences AS MATERIALIZED (
            SELECT glyphoxa_audience_mask($1, {search.reader}::text) AS mask
        ),"""
    return f"""{audiences}
        collection AS (
            SELECT w.documents::float8 AS documents,
                   greatest(w.total_length::float8 / greatest(w.documents, 1), 1)
                       AS average_length,
                   w.reference_length
                       / greatest(w.total_length::float8 / greatest(w.documents, 1), 1)
                       AS ratio
            FROM word_collections w
            WHERE w.campaign_id = $1 AND w.collection = '{collection}'
        ),
        terms AS (
            SELECT l.lexeme, coalesce(wf.documents, 0) AS holding,
                   glyphoxa_bm25_idf(stats.documents, coalesce(wf.documents, 0)) AS idf
            FROM collection stats
                 CROSS JOIN unnest(tsvector_to_array(to_tsvector('english', {query})))
                     AS l(lexeme)
                 LEFT JOIN word_frequencies wf
                   ON wf.campaign_id = $1 AND wf.collection = '{collection}'
                  AND wf.lexeme = l.lexeme
        )"""


def _at_run_time(placeholder: str, type_name: str) -> str:
    """A parameter the planner cannot look into (a sub-select's output is known only when
    the statement runs): a plan made for its value is the plan made for any."""
    return f"(SELECT {placeholder}::{type_name})"


def _exact_score(tsv: str) -> str:
    """BM25 of the row whose words are `tsv`, over the query's terms."""
    return f"""(
        SELECT sum(t.idf * glyphoxa_bm25_weight(
                   coalesce(array_length(u.positions, 1), 1), length({tsv}), stats.average_length))
        FROM unnest({tsv}) u JOIN terms t ON t.lexeme = u.lexeme, collection stats)"""


def _read_best(search: WordSearch, depth: int) -> str:
    """The first pass: the best `depth` postings of each word. Complete when no row left
    unread could enter the top k; otherwise its `threshold` is a score at least k rows
    reach."""
    collection = TABLES[search.table]
    alias = search.alias
    if search.conditions:
        kept_rows = f"""
            FROM candidates d JOIN {search.table} {alias}
              ON {alias}.campaign_id = $1 AND {alias}.id = d.id
            WHERE {where(list(search.conditions))}"""
    else:
        kept_rows = "FROM candidates d"
    return f"""
        WITH {_statistics(search, planned_once=True)},
        read AS MATERIALIZED (
            SELECT t.lexeme, t.idf, p.row_id, p.frequency, p.length, p.impact
            FROM terms t{_with_audiences(search)} CROSS JOIN LATERAL (
                SELECT p.row_id, p.frequency, p.length, p.impact FROM word_postings p
                WHERE p.campaign_id = $1 AND p.collection = '{collection}'
                  AND p.lexeme = t.lexeme AND {_heard(search, "p")}
                ORDER BY p.impact DESC, p.row_id DESC
                LIMIT {depth}) p
        ),
        bounds AS (
            -- The most a posting of this word not read yet can add to a row's score.
            SELECT CASE WHEN count(r.row_id) < {depth} THEN 0
                        ELSE t.idf * glyphoxa_bm25_bound(
                            min(r.impact), (SELECT ratio FROM collection))
                   END AS bound, t.lexeme
            FROM terms t LEFT JOIN read r USING (lexeme)
            GROUP BY t.lexeme, t.idf
        ),
        candidates AS (
            SELECT r.row_id AS id, array_agg(r.lexeme) AS seen,
                   sum(r.idf * glyphoxa_bm25_weight(r.frequency, r.length, stats.average_length))
                       AS lower
            FROM read r, collection stats
            GROUP BY r.row_id
        ),
        kept AS MATERIALIZED (
            SELECT d.id, d.lower,
                   d.lower + coalesce((SELECT sum(b.bound) FROM bounds b
                                       WHERE b.lexeme <> ALL (d.seen)), 0) AS upper
            {kept_rows}
        ),
        best AS MATERIALIZED (
            SELECT id, lower FROM kept ORDER BY lower DESC, id
            LIMIT {_at_run_time(search.limit, "int")}
        ),
        verdict AS (
            SELECT unread = 0 OR (
                       (SELECT count(*) FROM best) = {search.limit}
                       AND (SELECT min(lower) FROM best) >= unread * {1 - TIE}
                       AND (SELECT min(lower) FROM best) >= {1 - TIE} * coalesce(
                           (SELECT max(upper) FROM kept
                            WHERE id NOT IN (SELECT id FROM best)), 0)
                   ) AS complete,
                   (SELECT CASE WHEN count(*) = {search.limit} THEN min(lower) ELSE 0 END
                    FROM best) AS threshold
            FROM (SELECT coalesce(sum(bound), 0) AS unread FROM bounds) u
        ),
        scored AS (
            SELECT b.id, {_exact_score(f"{alias}.tsv")} AS rank
            FROM best b JOIN {search.table} {alias}
              ON {alias}.campaign_id = $1 AND {alias}.id = b.id
        )
        SELECT {search.columns}, s.rank, v.complete, v.threshold
        FROM verdict v
             LEFT JOIN (scored s JOIN {search.table} {alias}
                        ON {alias}.campaign_id = $1 AND {alias}.id = s.id)
               ON v.complete
        ORDER BY s.rank DESC, {alias}.id
    """


def _read_essential(search: WordSearch, threshold: str, scored: int, read_whole: int) -> str:
    """The second pass (MaxScore): a row scoring `threshold` or more holds one of the words
    whose most possible weights add up to that, the rarer ones: their postings are read
    whole (and those of any word held by few rows), and a row's other words are counted for
    the `scored` rows with the most weight in those. Complete when no row left could beat
    the k-th of those."""
    collection = TABLES[search.table]
    alias = search.alias
    cut = f"{_at_run_time(threshold, 'float8')} * {1 - TIE}"
    hopeful = f"""
            -- Rows that may reach the threshold, most promising first; one more than are
            -- scored, to know what the rest could reach.
            SELECT d.id, d.score + rest.most AS upper, row_number() OVER w AS place,
                   count(*) OVER () AS of_all
            FROM partial d CROSS JOIN rest
            WHERE d.score + rest.most >= {cut}
            WINDOW w AS (ORDER BY d.score DESC, d.id)
            ORDER BY d.score DESC, d.id
            LIMIT {scored} + 1"""
    if search.filter_first and search.conditions:
        # Only rows the conditions keep, checked most promising first until there are
        # enough: `of_all` then counts at most one more than are scored.
        hopeful = f"""
            SELECT k.id, k.upper, row_number() OVER w AS place, count(*) OVER () AS of_all
            FROM (
                SELECT o.id, o.upper
                FROM (
                    -- In order first (OFFSET 0 keeps it a step of its own), so that the
                    -- conditions are checked row by row from the best, not for every row.
                    SELECT d.id, d.score, d.score + rest.most AS upper
                    FROM partial d CROSS JOIN rest
                    WHERE d.score + rest.most >= {cut}
                    ORDER BY d.score DESC, d.id
                    OFFSET 0
                ) o
                WHERE EXISTS (SELECT FROM {search.table} {alias}
                              WHERE {alias}.campaign_id = $1 AND {alias}.id = o.id
                                AND {where(list(search.conditions))})
                ORDER BY o.score DESC, o.id
                LIMIT {scored} + 1
            ) k
            WINDOW w AS (ORDER BY k.upper DESC, k.id)"""
    return f"""
        WITH {_statistics(search, planned_once=True)},
        most AS (
            -- The most each word can add to a score: its best posting's weight.
            SELECT t.lexeme, t.idf, t.holding, coalesce(t.idf * glyphoxa_bm25_bound(
                (SELECT p.impact FROM word_postings p
                 WHERE p.campaign_id = $1 AND p.collection = '{collection}'
                   AND p.lexeme = t.lexeme AND {_heard(search, "p")}
                 ORDER BY p.impact DESC LIMIT 1),
                (SELECT ratio FROM collection)) * {1 + TIE}, 0) AS weight
            FROM terms t{_with_audiences(search)}
        ),
        running AS (
            SELECT lexeme, idf, weight, holding,
                   -- Words that a row reaching the threshold may lack (too common to reach
                   -- it alone or together) are read whole all the same when that is cheaper
                   -- than counting them row by row.
                   sum(weight) OVER (ORDER BY weight, lexeme) >= {cut}
                       OR holding <= {read_whole} AS read_whole
            FROM most
        ),
        rest AS (
            SELECT coalesce(sum(weight), 0) AS most,
                   coalesce(sum(holding), 0)::bigint AS postings
            FROM running WHERE NOT read_whole
        ),
        partial AS (
            SELECT p.row_id AS id,
                   sum(r.idf * glyphoxa_bm25_weight(p.frequency, p.length, stats.average_length))
                       AS score
            FROM running r{_with_audiences(search)}
                 JOIN word_postings p
                   ON p.campaign_id = $1 AND p.collection = '{collection}'
                  AND p.lexeme = r.lexeme AND {_heard(search, "p")},
                 collection stats
            WHERE r.read_whole
            GROUP BY p.row_id
        ),
        hopeful AS MATERIALIZED ({hopeful}
        ),
        scored AS MATERIALIZED (
            SELECT {alias}.id,
                   CASE WHEN rest.most = 0 THEN h.upper
                        ELSE {_exact_score(f"{alias}.tsv")} END AS rank
            FROM hopeful h CROSS JOIN rest
                 JOIN {search.table} {alias}
                   ON {alias}.campaign_id = $1 AND {alias}.id = h.id
            WHERE h.place <= {scored} AND {where(list(search.conditions))}
        ),
        best AS MATERIALIZED (
            SELECT id, rank FROM scored ORDER BY rank DESC, id
            LIMIT {_at_run_time(search.limit, "int")}
        ),
        verdict AS (
            -- Every hopeful row scored, or none left that could beat the k-th.
            SELECT coalesce((SELECT max(of_all) FROM hopeful), 0) <= {scored} OR (
                       (SELECT count(*) FROM best) = {search.limit}
                       AND (SELECT min(rank) FROM best)
                           >= (SELECT upper FROM hopeful WHERE place = {scored} + 1)
                              * {1 - TIE}
                   ) AS complete,
                   coalesce((SELECT max(of_all) FROM hopeful), 0) AS hopeful,
                   (SELECT postings FROM rest) AS unread_postings
        )
        SELECT {search.columns}, s.rank, v.complete, v.hopeful, v.unread_postings
        FROM verdict v
             LEFT JOIN (best s JOIN {search.table} {alias}
                        ON {alias}.campaign_id = $1 AND {alias}.id = s.id)
               ON v.complete
        ORDER BY s.rank DESC, {alias}.id
    """


def _score_all(search: WordSearch) -> str:
    alias = search.alias
    scope = where([f"{alias}.campaign_id = $1", *search.conditions])
    return f"""
        WITH {_statistics(search)},
        matching AS MATERIALIZED (
            SELECT {alias}.id, {alias}.tsv FROM {search.table} {alias}
            WHERE {scope} AND {alias}.tsv @@ {or_tsquery(search.query)}
        ),
        scored AS (
            SELECT m.id, {_exact_score("m.tsv")} AS rank
            FROM matching m
            ORDER BY rank DESC, m.id
            LIMIT {search.limit}
        )
        SELECT {search.columns}, s.rank, true AS complete
        FROM scored s JOIN {search.table} {alias}
          ON {alias}.campaign_id = $1 AND {alias}.id = s.id
        ORDER BY s.rank DESC, {alias}.id
    """
