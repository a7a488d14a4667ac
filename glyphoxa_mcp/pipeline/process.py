"""Processing a session: names corrected, then passages, links to known entities and
embeddings into the index.

Idempotent: a passage's content identifies it, so processing again stores nothing new, and a
run cut short finishes when started again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from glyphoxa_mcp.concurrency import first_error
from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS, CorrectorCache
from glyphoxa_mcp.correction.llm_stage import LLMNameCorrector
from glyphoxa_mcp.domain.models import Entry, NewChunk
from glyphoxa_mcp.domain.reports import ProcessReport
from glyphoxa_mcp.pipeline.chunking import DEFAULT_POLICY, ChunkingPolicy, Passage, passages
from glyphoxa_mcp.pipeline.correct import correct_session
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.semantic_index import content_hash

# Small enough that a run cut short loses little, large enough to keep the embedder busy.
EMBED_BATCH = 32
# Storing a passage is mostly its HNSW insert, CPU work in the server backend of the
# connection that writes it: two writers keep both cores of the reference machine busy
# (1.5 rather than 3.1 ms a passage there) while the next batch is embedded.
WRITERS = 2


@dataclass(frozen=True)
class IndexReport:
    passages: int
    embedded: int
    removed: int


async def process_session(
    memory: CampaignMemory,
    embedder: Embedder,
    session_id: str,
    policy: ChunkingPolicy = DEFAULT_POLICY,
    on_progress: Callable[[int, int], None] | None = None,
    correctors: CorrectorCache = SHARED_CORRECTORS,
    llm: LLMNameCorrector | None = None,
) -> ProcessReport:
    corrected = await correct_session(memory, session_id, correctors, llm)
    entries = await memory.log.entries(session_id)
    indexed = await index_passages(memory, embedder, session_id, entries, policy, on_progress)
    return ProcessReport(
        session_id,
        len(entries),
        indexed.passages,
        corrected.changed,
        embedded=indexed.embedded,
        removed=indexed.removed,
        llm_failures=corrected.llm_failures,
    )


async def index_passages(
    memory: CampaignMemory,
    embedder: Embedder,
    session_id: str,
    entries: Sequence[Entry],
    policy: ChunkingPolicy = DEFAULT_POLICY,
    on_progress: Callable[[int, int], None] | None = None,
) -> IndexReport:
    """Make the session's passages in the index those of `entries` (all of its lines, in
    spoken order): embed and store the missing ones, remove those no longer cut."""
    cut = passages(entries, policy)
    stored = await memory.index.stored_hashes(session_id)
    # A run cut short left whole batches behind: only what is missing is embedded again.
    # A passage repeated word for word is stored once, so concurrent batches never write
    # the same row.
    by_hash = {content_hash(p.content): p for p in cut}
    todo = [passage for digest, passage in by_hash.items() if digest not in stored]
    # Offline linking: the known entities each passage names (no guessing, no new facts).
    known = NamePattern.of_entities(await memory.known_entities())
    done = len(cut) - len(todo)

    def chunk(passage: Passage, vector: list[float]) -> NewChunk:
        return NewChunk(
            session_id=session_id,
            content=passage.content,
            embedding=vector,
            speaker_ids=tuple(sorted({e.speaker_id for e in passage.entries})),
            npc_ids=tuple(sorted({e.npc_id for e in passage.entries if e.npc_id})),
            entity_ids=tuple(known.owners_in(passage.content)),
            started_at=passage.started_at,
            ended_at=passage.ended_at,
            entry_ids=tuple(e.id for e in passage.entries),
        )

    async def store(batches: MemoryObjectReceiveStream[list[NewChunk]]) -> None:
        nonlocal done
        async with batches:
            async for batch in batches:
                await memory.index.upsert(batch)
                done += len(batch)
                if on_progress is not None:
                    on_progress(done, len(cut))

    send, receive = anyio.create_memory_object_stream[list[NewChunk]](WRITERS)
    with first_error():
        async with anyio.create_task_group() as tasks:
            for _ in range(WRITERS):
                tasks.start_soon(store, receive.clone())
            receive.close()
            async with send:
                for start in range(0, len(todo), EMBED_BATCH):
                    batch = todo[start : start + EMBED_BATCH]
                    vectors = await embedder.embed([p.content for p in batch])
                    await send.send([chunk(p, v) for p, v in zip(batch, vectors, strict=True)])
    removed = 0
    if stored - by_hash.keys():
        removed = await memory.index.remove_stale(session_id, set(by_hash))
    # Also when nothing was stored now: a run cut short may have stored every passage.
    await memory.index.tally_session_entities(session_id)
    return IndexReport(len(cut), embedded=len(todo), removed=removed)
