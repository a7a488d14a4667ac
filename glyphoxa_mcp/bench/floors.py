"""The floor under each tool: the bare SQL statements that fetch the rows the tool returned,
timed in the same run, through the same pool, right after the tool's own rows.

How a floor knows the rows: before it is timed, the tool is called once with each of its
argument sets (on the in-process server with precomputed query vectors, as its timed row is)
and its answer is read for the ids it returned. The floor for that argument set then reads
exactly those rows by primary key, or by the index the tool's rows are found by (an NPC's
relationships by source and target, its facts by subject, a transcript by session and
time), one statement after another on one connection: the least work a database does to
hand over the same rows, with no ranking, scope, redaction or assembly. A statement whose
id list came back empty still runs, as the tool too asked the database before it knew
there was nothing.

Learning the ids from the answer, rather than selecting by the tool's own arguments,
keeps every floor one plain statement per table: selecting by the arguments would repeat
the tool's name matching, ranking and scope, which are what the floor leaves out. A search
cannot answer without ranking, so a search's floor first runs the bare HNSW top-k statement
over the table it ranks by meaning (its candidates, with the query's precomputed vector).
Ranking by words has no SQL floor: the word leg is held to the in-memory BM25 library
instead (bench/peers.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from mcp.client import Client

from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID
from glyphoxa_mcp.bench.operations import (
    HOT_RESOURCE,
    QUERY_ENTITIES,
    SEARCH_FACTS,
    SEARCH_SESSIONS,
    SESSION_SUMMARY,
    floor_name,
    rotating,
)
from glyphoxa_mcp.bench.peers import candidates
from glyphoxa_mcp.bench.timing import Operation
from glyphoxa_mcp.bench.workload import Workload
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import BenchError
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.views.hot_context import HotContext
from glyphoxa_mcp.views.results import (
    QueryEntitiesResult,
    SearchFactsResult,
    SearchSessionsResult,
    SessionSummaryResult,
)

# The columns the stores read (no vectors: no tool returns one).
ENTITIES_BY_ID = """
SELECT id, type, name, aliases, attributes, secret, known_by FROM entities
WHERE campaign_id = $1 AND id = ANY($2::text[])
"""
RELATIONSHIPS_BY_ID = """
SELECT id, source_id, target_id, rel_type, attributes, provenance, secret, known_by
FROM relationships WHERE campaign_id = $1 AND id = ANY($2::bigint[])
"""
FACTS_BY_ID = """
SELECT id, subject_id, text, session_id, story_day, story_label, occurred_at, provenance,
       secret, known_by
FROM facts WHERE campaign_id = $1 AND id = ANY($2::bigint[])
"""
SESSIONS_BY_ID = """
SELECT id, title, started_at, ended_at, summary, summary_source FROM sessions
WHERE campaign_id = $1 AND id = ANY($2::text[])
"""
ENTRIES_BY_ID = """
SELECT id, session_id, speaker_id, speaker_name, text, raw_text, npc_id, spoken_at,
       duration_ms, words, corrections, dm_only
FROM session_entries WHERE campaign_id = $1 AND id = ANY($2::bigint[])
"""
CHUNKS_BY_ID = """
SELECT id, session_id, content, speaker_ids, npc_ids, entity_ids, topics, started_at, ended_at,
       entry_ids, dm_only
FROM chunks WHERE campaign_id = $1 AND id = ANY($2::bigint[])
"""
# An NPC's relationships, each with the entity at its other end (the identity section names
# it), by the two indexes on source and target.
RELATIONSHIPS_OF = """
SELECT r.id, r.source_id, r.target_id, r.rel_type, r.attributes, r.provenance, r.secret,
       r.known_by, o.name, o.type
FROM relationships r
JOIN entities o ON o.campaign_id = r.campaign_id
 AND o.id = CASE WHEN r.source_id = $2 THEN r.target_id ELSE r.source_id END
WHERE r.campaign_id = $1 AND (r.source_id = $2 OR r.target_id = $2)
"""
FACTS_OF = """
SELECT id, subject_id, text, session_id, story_day, story_label, occurred_at, provenance,
       secret, known_by
FROM facts WHERE campaign_id = $1 AND subject_id = $2 AND superseded_by IS NULL
"""
TRANSCRIPT_BETWEEN = """
SELECT id, session_id, speaker_id, speaker_name, text, npc_id, spoken_at, dm_only
FROM session_entries
WHERE campaign_id = $1 AND session_id = $2 AND spoken_at BETWEEN $3 AND $4
ORDER BY spoken_at, id
"""
SESSION_FACTS_OF = """
SELECT key, npc_id, text, set_at FROM session_facts WHERE campaign_id = $1 AND session_id = $2
"""
# The meaning ranking each search starts from (its candidates for top_k results).
NEAREST_PASSAGES = """
SELECT id FROM chunks WHERE campaign_id = $1 ORDER BY embedding <=> $2 LIMIT $3
"""
NEAREST_FACTS = """
SELECT id FROM facts WHERE campaign_id = $1 ORDER BY embedding <=> $2 LIMIT $3
"""
# Learning only, never timed: the passage a search hit's lines were cut from (a hit gives
# the lines of its passage, less those an earlier hit gave already).
PASSAGE_HOLDING = """
SELECT id FROM chunks
WHERE campaign_id = $1 AND session_id = $2 AND entry_ids @> $3::bigint[]
ORDER BY id LIMIT 1
"""

Statement = tuple[str, tuple[Any, ...]]
# What one argument set's floor reads: its statements, in order.
Reads = tuple[Statement, ...]


def _by_ids(sql: str, ids: Collection[Any]) -> Statement:
    return sql, (CAMPAIGN_ID, sorted(set(ids)))


def entity_reads(result: QueryEntitiesResult) -> Reads:
    """The entities returned, the entities at the other end of their relationships, and
    those relationships."""
    entities = {e.id for e in result.entities}
    entities |= {r.other_id for e in result.entities for r in e.relationships}
    links = {r.id for e in result.entities for r in e.relationships}
    return _by_ids(ENTITIES_BY_ID, entities), _by_ids(RELATIONSHIPS_BY_ID, links)


def summary_reads(result: SessionSummaryResult) -> Reads:
    """The session, and the entities it lists."""
    return (
        _by_ids(SESSIONS_BY_ID, [result.session_id]),
        _by_ids(ENTITIES_BY_ID, {e.id for e in result.entities}),
    )


def _nearest(sql: str, vector: Sequence[float], top_k: int) -> Statement:
    return sql, (CAMPAIGN_ID, list(vector), candidates(top_k))


def fact_reads(result: SearchFactsResult, vector: Sequence[float], top_k: int) -> Reads:
    """The facts nearest the query, then the facts and the relationships found."""
    facts = {hit.id for hit in result.results if hit.kind == "fact"}
    links = {hit.id for hit in result.results if hit.kind == "relationship"}
    return (
        _nearest(NEAREST_FACTS, vector, top_k),
        _by_ids(FACTS_BY_ID, facts),
        _by_ids(RELATIONSHIPS_BY_ID, links),
    )


def session_reads(
    result: SearchSessionsResult, passages: Collection[int], vector: Sequence[float], top_k: int
) -> Reads:
    """The passages nearest the query; then the passages the hits came from (`passages`,
    looked up beforehand), their lines, and the sessions whose titles the hits carry."""
    lines = {i for hit in result.results for i in hit.entry_ids}
    sessions = {hit.session_id for hit in result.results if hit.session_id is not None}
    return (
        _nearest(NEAREST_PASSAGES, vector, top_k),
        _by_ids(CHUNKS_BY_ID, passages),
        _by_ids(ENTRIES_BY_ID, lines),
        _by_ids(SESSIONS_BY_ID, sessions),
    )


def hot_reads(context: HotContext) -> Reads:
    """The NPC, where it is, who is there and its active quests; its relationships with
    their other ends and its facts (its identity); the transcript lines shown, by session
    and time; and the session's facts."""
    entities = {context.npc.id} | {e.id for e in (*context.present, *context.active_quests)}
    if context.location is not None:
        entities.add(context.location.id)
    npc = context.npc.id
    reads: list[Statement] = [
        _by_ids(ENTITIES_BY_ID, entities),
        (RELATIONSHIPS_OF, (CAMPAIGN_ID, npc)),
        (FACTS_OF, (CAMPAIGN_ID, npc)),
    ]
    if context.session_id is not None:
        if context.transcript:
            first: datetime = context.transcript[0].spoken_at
            last: datetime = context.transcript[-1].spoken_at
            reads.append((TRANSCRIPT_BETWEEN, (CAMPAIGN_ID, context.session_id, first, last)))
        reads.append((SESSION_FACTS_OF, (CAMPAIGN_ID, context.session_id)))
    return tuple(reads)


async def _answer(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    if result.is_error or result.structured_content is None:
        raise BenchError(f"{name}({arguments}) gave no result: {text_of(result.content)}")
    return dict(result.structured_content)


async def _passages(db: Database, result: SearchSessionsResult) -> set[int]:
    found: set[int] = set()
    for hit in result.results:
        if hit.session_id is None or not hit.entry_ids:
            continue
        passage = await db.pool.fetchval(
            PASSAGE_HOLDING, CAMPAIGN_ID, hit.session_id, hit.entry_ids
        )
        if passage is not None:
            found.add(passage)
    return found


async def _hot_context(client: Client, uri: str) -> HotContext:
    result = await client.read_resource(uri, cache_mode="bypass")
    texts = [getattr(content, "text", None) for content in result.contents]
    if not texts or texts[0] is None:
        raise BenchError(f"{uri} returned no text.")
    return HotContext.model_validate(json.loads(texts[0]))


def first_sets(workload: Workload, count: int) -> Workload:
    """The workload's first `count` argument sets of each operation: all that `count` calls
    rotate through (sample n takes set n modulo their number)."""
    return dataclasses.replace(
        workload,
        query_entities=workload.query_entities[:count],
        session_summary=workload.session_summary[:count],
        search_facts=workload.search_facts[:count],
        search_sessions=workload.search_sessions[:count],
        hot_uris=workload.hot_uris[:count],
    )


def _vector(workload: Workload, arguments: dict[str, Any]) -> list[float]:
    vector = workload.query_vectors.get(arguments["query"])
    if vector is None:
        raise BenchError(f"No precomputed vector for the query {arguments['query']!r}.")
    return vector


async def learn_reads(
    client: Client, db: Database, workload: Workload, only: Collection[str]
) -> dict[str, list[Reads]]:
    """For each operation named in `only` (the tools and the hot resource), what its floor
    reads for each of its argument sets, in the workload's order; learned by calling it."""
    learned: dict[str, list[Reads]] = {}
    if QUERY_ENTITIES in only:
        learned[QUERY_ENTITIES] = [
            entity_reads(
                QueryEntitiesResult.model_validate(await _answer(client, QUERY_ENTITIES, a))
            )
            for a in workload.query_entities
        ]
    if SESSION_SUMMARY in only:
        learned[SESSION_SUMMARY] = [
            summary_reads(
                SessionSummaryResult.model_validate(await _answer(client, SESSION_SUMMARY, a))
            )
            for a in workload.session_summary
        ]
    if SEARCH_FACTS in only:
        learned[SEARCH_FACTS] = [
            fact_reads(
                SearchFactsResult.model_validate(await _answer(client, SEARCH_FACTS, a)),
                _vector(workload, a),
                a["top_k"],
            )
            for a in workload.search_facts
        ]
    if SEARCH_SESSIONS in only:
        sessions = []
        for arguments in workload.search_sessions:
            found = SearchSessionsResult.model_validate(
                await _answer(client, SEARCH_SESSIONS, arguments)
            )
            passages = await _passages(db, found)
            vector = _vector(workload, arguments)
            sessions.append(session_reads(found, passages, vector, arguments["top_k"]))
        learned[SEARCH_SESSIONS] = sessions
    if HOT_RESOURCE in only:
        learned[HOT_RESOURCE] = [
            hot_reads(await _hot_context(client, uri)) for uri in workload.hot_uris
        ]
    return learned


def floor_operation(db: Database, operation: str, reads: Sequence[Reads]) -> Operation:
    """The floor of `operation`: sample n reads what the tool returned for its argument set
    n (rotating as the tool's row does)."""
    pick = rotating(reads)

    async def read(number: int) -> None:
        async with db.pool.acquire() as conn:
            for sql, arguments in pick(number):
                await conn.fetch(sql, *arguments)

    return Operation(floor_name(operation), read)


async def floor_operations(
    client: Client, db: Database, workload: Workload, only: Collection[str], calls: int
) -> list[Operation]:
    """The floors of the operations in `only`, learned through `client` (a server in the
    workload's scope), for the argument sets that `calls` calls (warm-up and timed) use."""
    learned = await learn_reads(client, db, first_sets(workload, calls), only)
    return [floor_operation(db, name, reads) for name, reads in learned.items()]
