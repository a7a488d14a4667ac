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
read once per connection from the extension's version (pgvector older than 0.8 on a `--dsn`
server keeps the path above).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import asyncpg

MIN_EF_SEARCH = 40
MAX_EF_SEARCH = 1000
ITERATIVE_SCAN_SINCE = (0, 8)
# pgvector's own default: enough for a filter that keeps a few percent of a large campaign;
# past it, the exact answer over the filtered rows is the cheaper one.
MAX_SCAN_TUPLES = 20_000
SELECT_PGVECTOR_VERSION = "SELECT extversion FROM pg_extension WHERE extname = 'vector'"


def scans_iteratively(pgvector_version: str | None) -> bool:
    """Whether pgvector of that version can continue a filtered HNSW scan (0.8 and newer)."""
    if not pgvector_version:
        return False
    parts: list[int] = []
    for part in pgvector_version.split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts) >= ITERATIVE_SCAN_SINCE


class VectorConnection(asyncpg.Connection):  # type: ignore[misc]  # asyncpg is untyped
    """A pool's connection that knows, from when it connected, whether its server scans
    iteratively (see `remember_iterative_scan`)."""

    iterative_scan: bool | None = None


# Set for the whole session of a connection that scans iteratively: every HNSW search of
# ours wants them, and three statements more per search (a transaction to SET LOCAL them)
# cost more than the search at reference scale.
ITERATIVE_SCAN_SETTINGS = (
    "SET hnsw.iterative_scan = relaxed_order;"
    f" SET hnsw.max_scan_tuples = {MAX_SCAN_TUPLES};"
    f" SET hnsw.ef_search = {MIN_EF_SEARCH}"
)


async def remember_iterative_scan(conn: asyncpg.Connection) -> None:
    """Ask once, for a connection that can keep the answer (a VectorConnection), and set
    the iterative scan up for its session."""
    # Not isinstance: asyncpg's metaclass counts every connection as any Connection class.
    if VectorConnection in type(conn).__mro__:
        conn.iterative_scan = scans_iteratively(await conn.fetchval(SELECT_PGVECTOR_VERSION))
        if conn.iterative_scan:
            await conn.execute(ITERATIVE_SCAN_SETTINGS)


def _set_up_for_iterative_scans(conn: asyncpg.Connection) -> bool:
    """Whether the connection scans iteratively with its session set up for it."""
    return getattr(conn, "iterative_scan", None) is True  # read through a pool's proxy too


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
        if _set_up_for_iterative_scans(conn) and ef_search == MIN_EF_SEARCH:
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
    if _set_up_for_iterative_scans(conn):
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
