"""Nearest-neighbour queries that stay correct under filters.

pgvector's HNSW scan keeps `ef_search` candidates and filters afterwards, so a selective
filter can leave fewer than k rows. Ask the index first; if it comes back short, compute the
exact answer over the filtered rows instead. Either way the caller gets k rows when k exist.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

MIN_EF_SEARCH = 40
MAX_EF_SEARCH = 1000


def exact_variant(select: str, order_by: str, limit: str) -> str:
    """`select` (which must expose the `order_by` column) ranked without the index."""
    return f"""
        WITH candidates AS MATERIALIZED ({select})
        SELECT * FROM candidates ORDER BY {order_by} LIMIT {limit}
    """


async def nearest_rows(
    pool: asyncpg.Pool, *, approximate: str, exact: str, args: Sequence[object], k: int
) -> list[asyncpg.Record]:
    ef_search = min(max(MIN_EF_SEARCH, 2 * k), MAX_EF_SEARCH)
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search}")
        rows = await conn.fetch(approximate, *args)
        if len(rows) < k:
            rows = await conn.fetch(exact, *args)
    return rows
