"""Putting a synthetic campaign into PostgreSQL with COPY, and finding one loaded earlier.

The loader's connections are its own: binary COPY needs the driver's default jsonb codec
(JSON text in, binary out), not the pool's, which decodes jsonb to Python values.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from enum import Enum
from typing import Any

import anyio
import asyncpg
from pgvector.asyncpg import register_vector
from pydantic import BaseModel

from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID, Dataset
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.storage.semantic_index import TALLY_SESSION_ENTITIES, content_hash

# Marks a campaign whose load has not finished: it is never taken for a complete dataset.
LOADING_PREFIX = "glyphoxa bench (loading) "
TABLES = (
    "sessions",
    "entities",
    "relationships",
    "facts",
    "scenes",
    "session_entries",
    "chunks",
)
# Kept by triggers as the transcripts load (sql/032): analyzed with the tables above.
DERIVED_TABLES = ("session_npcs",)
COUNTS = f"""
SELECT {", ".join(f"(SELECT count(*) FROM {t} WHERE campaign_id = $1) AS {t}" for t in TABLES)}
"""
ENTRY_IDS = "SELECT source_key, id FROM session_entries WHERE campaign_id = $1"
CAMPAIGN_NAME = "SELECT name FROM campaigns WHERE id = $1"
Say = Callable[[str], None]


class Loaded(Enum):
    MISSING = "missing"
    SAME = "same"  # this very dataset, completely loaded
    OTHER = "other"  # another dataset, or a load that never finished


class LoadTimings(BaseModel):
    """Seconds per step of the load."""

    graph_s: float
    # The scenes, and who they made hear each line and passage as these were copied in.
    scenes_s: float = 0.0
    transcripts_s: float
    chunks_s: float
    analyze_s: float
    total_s: float


async def loaded(dsn: str, dataset: Dataset) -> Loaded:
    with driver_errors("look for a loaded benchmark campaign"):
        conn = await asyncpg.connect(dsn)
        try:
            name = await conn.fetchval(CAMPAIGN_NAME, CAMPAIGN_ID)
        finally:
            await conn.close()
    if name is None:
        return Loaded.MISSING
    return Loaded.SAME if name == dataset.campaign_name else Loaded.OTHER


async def delete_campaign(dsn: str) -> None:
    with driver_errors(f"delete the campaign {CAMPAIGN_ID!r}"):
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute("DELETE FROM campaigns WHERE id = $1", CAMPAIGN_ID)
        finally:
            await conn.close()


async def row_counts(dsn: str) -> dict[str, int]:
    """What the database holds for the benchmark campaign, per table."""
    with driver_errors("count the benchmark campaign's rows"):
        conn = await asyncpg.connect(dsn)
        try:
            row = await conn.fetchrow(COUNTS, CAMPAIGN_ID)
        finally:
            await conn.close()
    return dict(row)


async def _connect(dsn: str) -> asyncpg.Connection:
    conn = await asyncpg.connect(dsn)
    await register_vector(conn)
    return conn


async def _copy(
    conn: asyncpg.Connection, table: str, columns: Sequence[str], records: list[tuple[Any, ...]]
) -> None:
    await conn.copy_records_to_table(table, records=records, columns=list(columns))


def _visibility(row: Any) -> tuple[bool, list[str]]:
    return row.secret, list(row.known_by)


async def _load_people_and_ties(conn: asyncpg.Connection, dataset: Dataset) -> None:
    """Entities and relationships: what a scene's word travels along."""
    await _copy(
        conn,
        "entities",
        ("campaign_id", "id", "type", "name", "aliases", "attributes", "secret", "known_by"),
        [
            (
                CAMPAIGN_ID,
                e.id,
                e.type.value,
                e.name,
                list(e.aliases),
                json.dumps(e.attributes),
                *_visibility(e),
            )
            for e in dataset.entities
        ],
    )
    await _copy(
        conn,
        "relationships",
        (
            "campaign_id",
            "source_id",
            "target_id",
            "rel_type",
            "provenance",
            "embedding",
            "secret",
            "known_by",
        ),
        [
            (
                CAMPAIGN_ID,
                r.source_id,
                r.target_id,
                r.rel_type,
                json.dumps(r.provenance),
                dataset.relationship_vectors[i],
                *_visibility(r),
            )
            for i, r in enumerate(dataset.relationships)
        ],
    )


async def _load_facts(conn: asyncpg.Connection, dataset: Dataset) -> None:
    await _copy(
        conn,
        "facts",
        (
            "campaign_id",
            "subject_id",
            "text",
            "session_id",
            "story_day",
            "story_label",
            "occurred_at",
            "provenance",
            "embedding",
            "secret",
            "known_by",
        ),
        [
            (
                CAMPAIGN_ID,
                f.subject_id,
                f.text,
                f.session_id,
                f.story_day,
                f.story_label,
                f.occurred_at,
                json.dumps(f.provenance),
                dataset.fact_vectors[i],
                *_visibility(f),
            )
            for i, f in enumerate(dataset.facts)
        ],
    )


async def _load_scenes(conn: asyncpg.Connection, dataset: Dataset) -> None:
    """The scenes, before their lines: each line is then heard by those present as it is
    copied in (a scene added after its lines would make its session heard again). Their word
    (who heard of them) is taught by the database as they are inserted, over the
    relationships loaded before them."""
    await _copy(
        conn,
        "scenes",
        ("campaign_id", "session_id", "started_at", "location_id", "present", "title"),
        [
            (CAMPAIGN_ID, s.session_id, s.started_at, s.location_id, list(s.present), s.title)
            for s in dataset.scenes
        ],
    )


async def _load_entries(conn: asyncpg.Connection, dataset: Dataset) -> dict[str, int]:
    """The transcripts; returns the database id of each entry by its source key."""
    await _copy(
        conn,
        "session_entries",
        (
            "campaign_id",
            "session_id",
            "source_key",
            "speaker_id",
            "speaker_name",
            "text",
            "raw_text",
            "npc_id",
            "spoken_at",
            "duration_ms",
        ),
        [
            (
                CAMPAIGN_ID,
                e.session_id,
                e.source_key,
                e.speaker_id,
                e.speaker_name,
                e.text,
                e.text,
                e.npc_id,
                e.spoken_at,
                e.duration_ms,
            )
            for e in dataset.entries
        ],
    )
    return {row["source_key"]: row["id"] for row in await conn.fetch(ENTRY_IDS, CAMPAIGN_ID)}


async def _load_chunks(
    conn: asyncpg.Connection, dataset: Dataset, entry_ids: dict[str, int]
) -> None:
    keys = [e.source_key for e in dataset.entries]
    await _copy(
        conn,
        "chunks",
        (
            "campaign_id",
            "session_id",
            "content",
            "content_hash",
            "embedding",
            "speaker_ids",
            "npc_ids",
            "entity_ids",
            "topics",
            "started_at",
            "ended_at",
            "entry_ids",
        ),
        [
            (
                CAMPAIGN_ID,
                c.session_id,
                c.content,
                content_hash(c.content),
                dataset.chunk_vectors[i],
                list(c.speaker_ids),
                list(c.npc_ids),
                list(c.entity_ids),
                list(c.topics),
                c.started_at,
                c.ended_at,
                [entry_ids[keys[position]] for position in c.entries],
            )
            for i, c in enumerate(dataset.chunks)
        ],
    )
    # What `process` counts for each session once it has stored the session's passages.
    await conn.executemany(
        TALLY_SESSION_ENTITIES, [(CAMPAIGN_ID, session.id) for session in dataset.sessions]
    )


async def _timed(step: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await step()
    return time.perf_counter() - started


async def load(dsn: str, dataset: Dataset, say: Say) -> LoadTimings:
    """Load the dataset as the benchmark campaign, a witnessed one, which must not exist yet.
    The entities and relationships first, then two connections share the work: the facts on
    one, the scenes, the transcripts and then their chunks on the other."""
    started = time.perf_counter()
    with driver_errors("load the benchmark campaign"):
        first, second = await _connect(dsn), await _connect(dsn)
        try:
            await first.execute(
                "INSERT INTO campaigns (id, name, knowledge) VALUES ($1, $2, 'witnessed')",
                CAMPAIGN_ID,
                LOADING_PREFIX + dataset.spec.fingerprint,
            )
            await _copy(
                first,
                "sessions",
                (
                    "campaign_id",
                    "id",
                    "title",
                    "started_at",
                    "ended_at",
                    "summary",
                    "summary_source",
                ),
                [
                    (
                        CAMPAIGN_ID,
                        s.id,
                        s.title,
                        s.started_at,
                        s.ended_at,
                        s.summary,
                        "extractive" if s.summary else None,
                    )
                    for s in dataset.sessions
                ],
            )
            timings: dict[str, float] = {}
            entry_ids: dict[str, int] = {}
            say("loading the entities and relationships with COPY")
            people_s = await _timed(lambda: _load_people_and_ties(first, dataset))

            async def facts() -> None:
                timings["graph_s"] = people_s + await _timed(lambda: _load_facts(second, dataset))

            async def transcripts() -> None:
                timings["scenes_s"] = await _timed(lambda: _load_scenes(first, dataset))

                async def entries() -> None:
                    entry_ids.update(await _load_entries(first, dataset))

                timings["transcripts_s"] = await _timed(entries)
                timings["chunks_s"] = await _timed(lambda: _load_chunks(first, dataset, entry_ids))

            say(
                f"loading {len(dataset.scenes):,} scenes, {len(dataset.entries):,} entries "
                "and the facts with COPY"
            )
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(facts)
                tasks.start_soon(transcripts)
            say("analyzing the loaded tables")
            # Fresh statistics and visibility maps: the planner and index-only scans then see
            # the tables as they are after autovacuum in a long-running database.
            timings["analyze_s"] = await _timed(
                lambda: first.execute(f"VACUUM (ANALYZE) {', '.join(TABLES + DERIVED_TABLES)}")
            )
            await first.execute(
                "UPDATE campaigns SET name = $2 WHERE id = $1", CAMPAIGN_ID, dataset.campaign_name
            )
        finally:
            await first.close()
            await second.close()
    return LoadTimings(**timings, total_s=time.perf_counter() - started)
