"""The measured operations: the MCP tools and the hot resource through an MCP client (in
process or over stdio), and what is timed outside any server.

To measure something new, write one function that takes the run's `BenchContext` and
returns `Operation`s, and add it to `STANDALONE`; the runner times it and the report lists
it like every other row.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp.client import Client
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.mcpserver import MCPServer

from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID, Dataset
from glyphoxa_mcp.bench.timing import Operation
from glyphoxa_mcp.bench.workload import Workload
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import BenchError
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View

QUERY_ENTITIES = "memory.query_entities"
SESSION_SUMMARY = "memory.get_session_summary"
SEARCH_FACTS = "memory.search_facts"
SEARCH_SESSIONS = "memory.search_sessions"
HOT_RESOURCE = "glyphoxa://npc/{npc_id}/hot"
SELECT_1 = "SELECT 1 (pool round trip)"
EMBED_QUERY = "query embedding (offline model)"
SCOPE_REBUILD = "scope change applied after an entity change"
# Seconds each at reference scale: a handful tells how long the first call after a change
# waits.
REBUILDS = 5
# The tools that embed their query: measured with precomputed vectors, and again (under
# this suffix) with the embedder doing its work.
EMBEDDING_TOOLS = (SEARCH_FACTS, SEARCH_SESSIONS)
WITH_EMBEDDING = " + embedding"
# The rows the tools and the rankings are judged against (bench/floors.py, bench/peers.py):
# a tool's floor is named after it, in the same scope.
FLOOR_PREFIX = "floor: "
# Our own word ranking alone (BM25 in PostgreSQL), the in-memory library it is held to, and
# the search engine library its p95 is reported beside (not judged by).
WORD_LEG = "BM25 leg (SemanticIndex.search_text + SessionLog.search)"
WORD_PEER = "peer: bm25s (passages + utterances, in memory)"
TANTIVY_PEER = "peer: tantivy (passages + utterances, in memory, stemmed, stop words out)"
# Our own meaning ranking alone, and the bare HNSW statement under it.
MEANING_LEG = "meaning leg (SemanticIndex.nearest)"
MEANING_FLOOR = "floor: HNSW top-k (chunks)"
# The requests whose handling the server timer reports.
TIMED_METHODS = frozenset({"tools/call", "resources/read"})


TOUCH_ENTITY = "UPDATE entities SET updated_at = now() WHERE campaign_id = $1 AND id = $2"


class PrecomputedEmbedder:
    """The vectors of the workload's queries, known in advance: a search's latency then
    leaves the embedding out (it is measured on its own). A text it does not know is an
    error, never a made-up vector."""

    model = "precomputed"

    def __init__(self, vectors: dict[str, list[float]], dimension: int) -> None:
        self.vectors = vectors
        self.dimension = dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            return [self.vectors[text] for text in texts]
        except KeyError as exc:
            raise BenchError(f"No precomputed vector for the query {exc.args[0]!r}.") from None


class ServerTimer:
    """MCP middleware, put first in a server's chain: how long the server took to handle the
    last tool call or resource read, from receiving it to its result (no transport, no
    client)."""

    def __init__(self) -> None:
        self.last_ms: float | None = None

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        started = time.perf_counter_ns()
        try:
            return await call_next(ctx)
        finally:
            if ctx.method in TIMED_METHODS:
                self.last_ms = (time.perf_counter_ns() - started) / 1e6

    def attach(self, server: MCPServer) -> None:
        server.middleware.insert(0, self)

    def take(self) -> float:
        """The last call's duration, once."""
        if self.last_ms is None:
            raise BenchError("The server timer saw no call; is it attached?")
        taken, self.last_ms = self.last_ms, None
        return taken


def floor_name(operation: str) -> str:
    """The row of the bare statements under `operation`."""
    return FLOOR_PREFIX + operation


def rotating(arguments: Sequence[Any]) -> Callable[[int], Any]:
    """Sample `number`'s argument set: the tools' rows and their floors rotate alike."""
    return lambda number: arguments[number % len(arguments)]


def tool_operations(
    client: Client,
    workload: Workload,
    *,
    only: Collection[str],
    embeds_queries: bool,
    timer: ServerTimer | None = None,
) -> list[Operation]:
    """The four tools and the hot resource through `client` (those named in `only`). With a
    timer on the server, each call reports the server's own time for it. Searches are named
    with WITH_EMBEDDING when the server embeds their queries."""

    def named(name: str) -> str:
        return name + WITH_EMBEDDING if embeds_queries and name in EMBEDDING_TOOLS else name

    def tool(name: str, arguments: Sequence[dict[str, Any]]) -> Operation:
        pick = rotating(arguments)

        async def call(number: int) -> float | None:
            result = await client.call_tool(name, pick(number))
            if result.is_error:
                raise BenchError(f"{name}({pick(number)}) failed: {text_of(result.content)}")
            return timer.take() if timer else None

        return Operation(named(name), call)

    pick_uri = rotating(workload.hot_uris)

    async def hot(number: int) -> float | None:
        # "bypass": every read reaches the server, whatever the client may cache.
        result = await client.read_resource(pick_uri(number), cache_mode="bypass")
        if not result.contents:
            raise BenchError(f"{pick_uri(number)} returned nothing.")
        return timer.take() if timer else None

    operations = [
        tool(QUERY_ENTITIES, workload.query_entities),
        tool(SESSION_SUMMARY, workload.session_summary),
        tool(SEARCH_FACTS, workload.search_facts),
        tool(SEARCH_SESSIONS, workload.search_sessions),
        Operation(HOT_RESOURCE, hot),
    ]
    return [op for op in operations if op.name.removesuffix(WITH_EMBEDDING) in only]


@dataclass(frozen=True)
class BenchContext:
    """What a standalone measurement may use."""

    db: Database
    dataset: Dataset
    embedder: Embedder
    # Query texts, as the search tools' callers send them.
    queries: Sequence[str]
    # The DM's search_sessions argument sets, and the vector of each query: what the rankings
    # on their own (bench/peers.py) are asked.
    session_searches: Sequence[dict[str, Any]] = ()
    query_vectors: Mapping[str, list[float]] = field(default_factory=dict)


def database_round_trip(context: BenchContext) -> list[Operation]:
    """The floor under every tool: one trivial statement through the pool."""

    async def select_1(_number: int) -> None:
        await context.db.pool.fetchval("SELECT 1")

    return [Operation(SELECT_1, select_1)]


def query_embedding(context: BenchContext) -> list[Operation]:
    """What the search tools add to their latency before they query anything."""
    pick = rotating(context.queries)

    async def embed(number: int) -> None:
        await context.embedder.embed([pick(number)])

    return [Operation(EMBED_QUERY, embed)]


def scope_rebuild(context: BenchContext) -> list[Operation]:
    """What the first call after the DM changes an entity waits for: the change applied to
    the benchmarked NPC's scope, name index and name pattern (the change is a touch of one
    entity). Judged against an absolute target (report.SCOPE_CHANGE_TARGET_MS)."""
    npc = context.dataset.bench_npc
    view = View(CampaignMemory(context.db, CAMPAIGN_ID), npc)

    async def rebuild(_number: int) -> None:
        await context.db.pool.execute(TOUCH_ENTITY, CAMPAIGN_ID, npc)
        await view.warm_up()

    return [Operation(SCOPE_REBUILD, rebuild, samples=REBUILDS, warmup=1)]


STANDALONE: tuple[Callable[[BenchContext], list[Operation]], ...] = (
    database_round_trip,
    query_embedding,
    scope_rebuild,
)
