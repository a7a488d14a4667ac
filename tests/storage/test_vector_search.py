from __future__ import annotations

import asyncpg
import numpy as np
import pytest

from glyphoxa_mcp.db.database import Database, init_connection, keep_session
from glyphoxa_mcp.db.vector_connection import (
    SELECT_PGVECTOR_VERSION,
    VectorConnection,
    scans_iteratively,
)
from glyphoxa_mcp.storage.vector_search import (
    MAX_EF_SEARCH,
    exact_variant,
    nearest_rows,
    wider_search,
)


def test_an_unfiltered_search_that_found_nothing_tries_the_widest_search_first() -> None:
    # Only deleted rows were near: the exact answer would read the whole campaign.
    assert wider_search(0, 20, 40, filtered=False) == MAX_EF_SEARCH
    assert wider_search(0, 20, MAX_EF_SEARCH, filtered=False) is None
    assert wider_search(5, 20, 40, filtered=False) == wider_search(5, 20, 40)


@pytest.mark.parametrize(
    ("found", "k", "ef_search", "wider"),
    [
        (20, 20, 40, None),  # enough already
        (0, 20, 40, None),  # nothing survived the filter: the exact answer is cheap
        (16, 20, 40, 100),  # 40 % survive: ask for enough to keep 2 x 20
        (1, 20, 40, None),  # 2.5 % survive: more than MAX_EF_SEARCH needed, go exact
        (10, 20, 500, None),
    ],
)
def test_a_short_index_answer_is_asked_again_only_when_a_wider_search_can_fill_it(
    found: int, k: int, ef_search: int, wider: int | None
) -> None:
    assert wider_search(found, k, ef_search) == wider
    if wider is not None:
        assert wider <= MAX_EF_SEARCH


SCAN_TABLE = """
CREATE TABLE scan_probe (id int PRIMARY KEY, grp int NOT NULL, embedding vector(4) NOT NULL);
INSERT INTO scan_probe
SELECT i, i % 50, ARRAY[sin(i), cos(i), sin(i * 0.37), cos(i * 1.3)]::vector
FROM generate_series(1, 5000) AS i;
CREATE INDEX ON scan_probe USING hnsw (embedding vector_cosine_ops);
ANALYZE scan_probe;
"""
PROBE = "SELECT id, embedding <=> $1 AS distance FROM scan_probe WHERE grp = 7"


@pytest.mark.slow
async def test_an_iterative_scan_fills_a_selective_filter_from_the_index(db: Database) -> None:
    # A filter that keeps 2 % of the rows: ef_search's 40 candidates hold about one of them.
    await db.pool.execute(SCAN_TABLE)
    query = np.array([0.3, 0.9, 0.1, 0.2])
    exact = exact_variant(PROBE, "distance, id", "$2")
    async with db.pool.acquire() as conn:
        version = await conn.fetchval(SELECT_PGVECTOR_VERSION)
        truth = await conn.fetch(exact, query, 10)
    if not scans_iteratively(version):
        pytest.skip(f"pgvector {version} has no iterative scans")
    rows = await nearest_rows(
        db.pool,
        approximate=f"{PROBE} ORDER BY embedding <=> $1 LIMIT $2",
        exact="SELECT never_asked FROM scan_probe",  # an error if the exact answer is asked for
        args=[query, 10],
        k=10,
    )
    assert len(rows) == 10
    assert [r["distance"] for r in rows] == sorted(r["distance"] for r in rows)
    assert len({r["id"] for r in rows} & {r["id"] for r in truth}) >= 8


@pytest.mark.slow
async def test_a_pooled_connection_remembers_whether_its_server_scans_iteratively(
    db: Database,
) -> None:
    pool = await asyncpg.create_pool(
        db.location.dsn,
        min_size=1,
        max_size=1,
        init=init_connection,
        reset=keep_session,  # as the app's pool: the scan settings stay with the session
        connection_class=VectorConnection,
    )
    try:
        async with pool.acquire() as conn:
            version = await conn.fetchval(SELECT_PGVECTOR_VERSION)
            assert conn.iterative_scan is scans_iteratively(version)
            iterative = conn.iterative_scan
        if iterative:
            # Set up for the session, and kept by a search that widens ef_search for itself.
            await pool.execute(SCAN_TABLE)
            query = np.array([0.3, 0.9, 0.1, 0.2])
            for k in (10, 60):
                rows = await nearest_rows(
                    pool,
                    approximate=f"{PROBE} ORDER BY embedding <=> $1 LIMIT $2",
                    exact=exact_variant(PROBE, "distance, id", "$2"),
                    args=[query, k],
                    k=k,
                )
                assert len(rows) == k
                settings = await pool.fetchrow(
                    "SELECT current_setting('hnsw.iterative_scan') AS scan,"
                    " current_setting('hnsw.ef_search') AS ef"
                )
                assert (settings["scan"], settings["ef"]) == ("relaxed_order", "40")
    finally:
        await pool.close()
