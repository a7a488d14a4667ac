"""Pieces of SQL shared by the stores: numbered parameters, filters, visibility (pure)."""

from __future__ import annotations

from typing import Any

from glyphoxa_mcp.storage.models import SearchFilters


class Params:
    """Collects query arguments and hands out their `$n` placeholders."""

    def __init__(self, *initial: Any) -> None:
        self.values: list[Any] = list(initial)

    def add(self, value: Any) -> str:
        self.values.append(value)
        return f"${len(self.values)}"


def or_tsquery(placeholder: str) -> str:
    """A tsquery that matches any of the query's words; ranking rewards matching more of them.

    Questions rarely share every word with the answer, so AND semantics would find nothing.
    """
    return f"replace(plainto_tsquery('english', {placeholder})::text, ' & ', ' | ')::tsquery"


# BM25's usual constants: term frequency saturates at about k1, and b of the length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75


# A query word held by more than this share of a table's rows (by ANALYZE's statistics),
# and by more than MIN_COMMON_ROWS of them, is too common to find rows by: at reference
# scale one such word ("near", a speaker's name) matched 40,000 passages, and scoring them
# all took 450 ms; "say", in 4.4% of utterances, cost 75 of a 100 ms search. Rows are then
# found by the query's other words, and still scored by all. A row of average length that
# holds only such a word, once, would score its IDF: about 3.9 for a word in 2% of rows,
# little more than half of one mention of a word in 0.1% of them (6.9).
COMMON_SHARE = 0.02
MIN_COMMON_ROWS = 2_000


def bm25_search(
    *,
    table: str,
    alias: str,
    columns: str,
    campaign: str,
    conditions: list[str],
    query: str,
    limit: str,
    count_exactly: bool = False,
) -> str:
    """Rows of `table` sharing words with the query (placeholder `query`), ranked by BM25 as
    `rank`, best first: a rare word counts for more than a common one, which `ts_rank` alone
    does not know.

    Term statistics are read at query time from the rows that `conditions` select (document
    frequencies from the rows matching any query word, which are exactly the rows holding it),
    so they are always current without a maintained table; the frequency of a word too common
    to search by is estimated from ANALYZE's statistics instead. The average length is that of
    the matching rows; lengths count distinct lexemes.

    Rows are those of the campaign (placeholder `campaign`) that `conditions` keep. How many
    that is: with no conditions, the campaign's maintained count; with `count_exactly`
    (conditions an index narrows to few rows, such as one session's), counted; otherwise
    (a speaker, a time range: a third of the campaign, counted by reading all of it, 260 ms
    at reference scale) the campaign's count times the share of the rows matching the query's
    words that the conditions keep, read from the rows the search reads anyway.
    """
    scope = where([f"{alias}.campaign_id = {campaign}", *conditions])
    campaign_rows = (
        f"SELECT coalesce((SELECT row_count FROM campaign_row_counts WHERE campaign_id = "
        f"{campaign} AND table_name = '{table}'), 0)::float8"
    )
    estimated = bool(conditions) and not count_exactly
    if not conditions or estimated:
        documents = campaign_rows
    else:
        documents = f"SELECT count(*)::float8 FROM {table} {alias} WHERE {scope}"
    searched_rows = f"{alias}.campaign_id = {campaign}" if estimated else scope
    kept = f"coalesce({where(conditions)}, false)" if estimated else "TRUE"
    kept_share = (
        "(SELECT count(*) FILTER (WHERE kept)::float8 / greatest(count(*), 1) FROM matching)"
        if estimated
        else "1"
    )
    return f"""
        WITH query AS (
            SELECT {or_tsquery(query)} AS tsq,
                   tsvector_to_array(to_tsvector('english', {query})) AS lexemes,
                   ({documents}) AS documents
        ),
        common AS (
            SELECT u.lexeme, u.share * query.documents AS df
            FROM query, pg_stats s,
                 unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs)
                     AS u(lexeme, share)
            WHERE s.schemaname = current_schema() AND s.tablename = '{table}'
              AND s.attname = 'tsv' AND u.lexeme = ANY(query.lexemes)
              AND u.share > {COMMON_SHARE} AND u.share * query.documents > {MIN_COMMON_ROWS}
        ),
        searched AS (
            -- The query's other words; every word when all of them are common.
            SELECT coalesce(
                (SELECT string_agg(quote_literal(l), ' | ')::tsquery
                 FROM unnest(query.lexemes) AS l
                 WHERE l NOT IN (SELECT lexeme FROM common)),
                query.tsq) AS tsq,
                EXISTS (SELECT 1 FROM unnest(query.lexemes) AS l
                        WHERE l NOT IN (SELECT lexeme FROM common)) AS pruned
            FROM query
        ),
        matching AS MATERIALIZED (
            SELECT {alias}.id, k.kept,
                   CASE WHEN k.kept THEN length({alias}.tsv)::float8 END AS len,
                   -- Only the query's lexemes, with their positions: marked with weight A
                   -- and kept, all in C, so that unnest has little left to expand.
                   CASE WHEN k.kept THEN ts_filter(
                       setweight(setweight({alias}.tsv, 'D'), 'A', query.lexemes), '{{a}}'
                   ) END AS found
            -- OFFSET 0: the conditions are evaluated once per row, not once per use of kept.
            FROM {table} {alias} CROSS JOIN LATERAL (SELECT {kept} AS kept OFFSET 0) k,
                 query, searched
            WHERE {searched_rows} AND {alias}.tsv @@ searched.tsq
        ),
        occurrences AS MATERIALIZED (
            SELECT m.id, m.len, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS tf
            FROM matching m, unnest(m.found) AS t
            WHERE m.kept
        ),
        frequency AS (
            SELECT lexeme, count(*)::float8 AS df FROM occurrences, searched
            WHERE NOT (searched.pruned AND lexeme IN (SELECT lexeme FROM common))
            GROUP BY lexeme
            UNION ALL
            SELECT common.lexeme, common.df FROM common, searched WHERE searched.pruned
        ),
        collection AS (
            SELECT query.documents * {kept_share} AS documents,
                   (SELECT avg(len) FROM matching WHERE kept) AS avg_len
            FROM query
        ),
        scored AS (
            SELECT o.id, sum(
                ln(1 + greatest(c.documents - f.df + 0.5, 0.5) / (f.df + 0.5))
                * o.tf * ({BM25_K1} + 1)
                / (o.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * o.len / c.avg_len))
            ) AS rank
            FROM occurrences o JOIN frequency f USING (lexeme) CROSS JOIN collection c
            GROUP BY o.id
            ORDER BY rank DESC, o.id
            LIMIT {limit}
        )
        SELECT {columns}, s.rank FROM scored s JOIN {table} {alias} ON {alias}.id = s.id
        ORDER BY s.rank DESC, {alias}.id
    """


def entry_conditions(filters: SearchFilters, params: Params, alias: str) -> list[str]:
    """WHERE conditions of `filters` for L1 session entries."""
    conditions = []
    if filters.session_id is not None:
        conditions.append(f"{alias}.session_id = {params.add(filters.session_id)}")
    if filters.speaker_ids is not None:
        speakers = params.add(list(filters.speaker_ids))
        conditions.append(f"{alias}.speaker_id = ANY({speakers}::text[])")
    if filters.npc_id is not None:
        conditions.append(f"{alias}.npc_id = {params.add(filters.npc_id)}")
    if filters.after is not None:
        conditions.append(f"{alias}.spoken_at >= {params.add(filters.after)}")
    if filters.before is not None:
        conditions.append(f"{alias}.spoken_at < {params.add(filters.before)}")
    return conditions + _withheld(filters, params, alias)


def chunk_conditions(filters: SearchFilters, params: Params, alias: str) -> list[str]:
    """WHERE conditions of `filters` for L2 chunks; times match chunks whose span overlaps."""
    conditions = []
    if filters.session_id is not None:
        conditions.append(f"{alias}.session_id = {params.add(filters.session_id)}")
    if filters.speaker_ids is not None:
        conditions.append(f"{alias}.speaker_ids && {params.add(list(filters.speaker_ids))}::text[]")
    if filters.npc_id is not None:
        conditions.append(f"{alias}.npc_ids @> ARRAY[{params.add(filters.npc_id)}::text]")
    if filters.after is not None:
        after = params.add(filters.after)
        conditions.append(f"coalesce({alias}.ended_at, {alias}.started_at) >= {after}")
    if filters.before is not None:
        conditions.append(f"{alias}.started_at < {params.add(filters.before)}")
    return conditions + _withheld(filters, params, alias)


def _withheld(filters: SearchFilters, params: Params, alias: str) -> list[str]:
    """Conditions leaving out what the viewer may not read (lines and passages alike)."""
    conditions = []
    if not filters.include_dm_only:
        conditions.append(f"NOT {alias}.dm_only")
    if filters.withheld_sessions:
        withheld = params.add(list(filters.withheld_sessions))
        conditions.append(f"coalesce({alias}.session_id, '') <> ALL({withheld}::text[])")
    return conditions


def visible(alias: str, npc_placeholder: str) -> str:
    """Condition: the row at `alias` is within the knowledge scope of the NPC (NULL: the DM)."""
    return f"glyphoxa_visible({alias}.secret, {alias}.known_by, {npc_placeholder}::text)"


def entity_visible(alias: str, npc_placeholder: str) -> str:
    """Like `visible`, and an NPC always knows itself."""
    return f"({visible(alias, npc_placeholder)} OR {alias}.id = {npc_placeholder}::text)"


def where(conditions: list[str]) -> str:
    return " AND ".join(conditions) if conditions else "TRUE"
