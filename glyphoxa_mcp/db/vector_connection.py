"""A pooled connection that knows whether its server scans vector indexes iteratively, and
has its session set up for it.

pgvector 0.8 can continue a filtered HNSW scan until enough rows pass the filter
(`hnsw.iterative_scan`); older servers cannot. Whether a server can is read once per
connection, when the pool opens it (`Database`'s `init_connection`), from the extension's
version; the searches that rely on it are in storage/vector_search.py.
"""

from __future__ import annotations

import asyncpg

MIN_EF_SEARCH = 40
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


def set_up_for_iterative_scans(conn: asyncpg.Connection) -> bool:
    """Whether the connection scans iteratively with its session set up for it."""
    return getattr(conn, "iterative_scan", None) is True  # read through a pool's proxy too
