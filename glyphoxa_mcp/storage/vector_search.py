"""Nearest-neighbour queries that stay correct under filters.

pgvector's HNSW scan keeps `ef_search` candidates and filters afterwards, so a selective
filter can leave fewer than k rows. Ask the index first; if it comes back short but found
some, ask again with as many candidates as that share of survivors needs (twice over), when
that is within MAX_EF_SEARCH; if still short, compute the exact answer over the filtered rows
instead. Either way the caller gets k rows when k exist.

The exact answer reads every row the filter keeps: cheap for a session's 200 passages,
but 200-400 ms when a filter keeps a third of 40,000 (a speaker who is in most scenes),
where a wider index search takes a few milliseconds.

Without a filter, an index that finds nothing has found rows deleted since the last VACUUM
(the index keeps them until then, and a scan counts them among its candidates): passages
cut again after a correction, or a session processed anew. Reading the whole campaign
exactly would take 650 ms at reference scale, so the widest index search comes first.

pgvector 0.8 can instead continue the scan until k rows pass the filter
(`hnsw.iterative_scan`), up to MAX_SCAN_TUPLES index entries: one query where the path above
takes two or three, and the exact answer only when even that comes back short. Its relaxed
order returns rows nearly by distance; they are sorted again here. Whether the server can is
read once per connection from the extension's version (db/vector_connection.py; pgvector
older than 0.8 on a `--dsn` server keeps the path above).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import asyncpg

from glyphoxa_mcp.db.vector_connection import (
    MAX_SCAN_TUPLES,
    MIN_EF_SEARCH,
    SELECT_PGVECTOR_VERSION,
    scans_iteratively,
    set_up_for_iterative_scans,
)

MAX_EF_SEARCH = 1000


def exact_variant(select: str, order_by: str, limit: str) -> str:
    """`select` (which must expose the `order_by` column) ranked without the index."""
    return f"""
        WITH candidates AS MATERIALIZED ({select})
        SELECT * FROM candidates ORDER BY {order_by} LIMIT {limit}
    """


def wider_search(found: int, k: int, ef_search: int, *, filtered: bool = True) -> int | None:
    """The ef_search to try next after `found` of `k` rows came back from `ef_search`
    candidates, or None when the index is not worth asking again (nothing survived the
    filter, or too few to reach k within MAX_EF_SEARCH). Unfiltered, nothing found means
    deleted rows crowd the nearest: the widest search."""
    if found >= k:
        return None
    if found == 0:
        return MAX_EF_SEARCH if not filtered and ef_search < MAX_EF_SEARCH else None
    wanted = math.ceil(2 * k * ef_search / found)
    return wanted if wanted <= MAX_EF_SEARCH else None


async def nearest_rows(
    pool: asyncpg.Pool,
    *,
    approximate: str,
    exact: str,
    args: Sequence[object],
    k: int,
    filtered: bool = True,
    rank_by: Sequence[str] = ("distance", "id"),
) -> list[asyncpg.Record]:
    """`filtered`: the statements keep only some of the campaign's rows. `rank_by`: the
    columns `exact` orders by, to put an iterative scan's rows in the same order."""
    ef_search = min(max(MIN_EF_SEARCH, 2 * k), MAX_EF_SEARCH)
    async with pool.acquire() as conn:
        rows: list[asyncpg.Record]
        if set_up_for_iterative_scans(conn) and ef_search == MIN_EF_SEARCH:
            rows = list(await conn.fetch(approximate, *args))
        else:
            async with conn.transaction():
                rows = await _search_in_transaction(
                    conn, approximate, args, k, ef_search, filtered=filtered
                )
        if await _iterative(conn):
            rows.sort(key=lambda row: tuple(row[column] for column in rank_by))
        if len(rows) < k:
            rows = list(await conn.fetch(exact, *args))
    return rows


async def _iterative(conn: asyncpg.Connection) -> bool:
    if set_up_for_iterative_scans(conn):
        return True
    known = getattr(conn, "iterative_scan", None)
    if isinstance(known, bool):
        return known
    return scans_iteratively(await conn.fetchval(SELECT_PGVECTOR_VERSION))


async def _search_in_transaction(
    conn: asyncpg.Connection,
    approximate: str,
    args: Sequence[object],
    k: int,
    ef_search: int,
    *,
    filtered: bool,
) -> list[asyncpg.Record]:
    """The search with settings LOCAL to the transaction: a wider ef_search, or a
    connection not set up for iterative scans (not from our pool, or an older pgvector)."""
    rows: list[asyncpg.Record]
    if await _iterative(conn):
        await conn.execute(
            f"SET LOCAL hnsw.ef_search = {ef_search};"
            " SET LOCAL hnsw.iterative_scan = relaxed_order;"
            f" SET LOCAL hnsw.max_scan_tuples = {MAX_SCAN_TUPLES}"
        )
        return list(await conn.fetch(approximate, *args))
    await conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search}")
    rows = await conn.fetch(approximate, *args)
    wider = wider_search(len(rows), k, ef_search, filtered=filtered)
    if wider is not None:
        await conn.execute(f"SET LOCAL hnsw.ef_search = {wider}")
        rows = await conn.fetch(approximate, *args)
    return list(rows)
