"""Processing a session: names corrected, then passages, links to known entities and
embeddings into the index.

Idempotent: a passage's content identifies it, so processing again stores nothing new, and a
run cut short finishes when started again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS, CorrectorCache
from glyphoxa_mcp.correction.llm_stage import LLMNameCorrector
from glyphoxa_mcp.pipeline.chunking import DEFAULT_POLICY, ChunkingPolicy, passages
from glyphoxa_mcp.pipeline.correct import correct_session
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import NewChunk
from glyphoxa_mcp.storage.semantic_index import content_hash

# Small enough that a run cut short loses little, large enough to keep the embedder busy.
EMBED_BATCH = 32


@dataclass(frozen=True)
class ProcessReport:
    session_id: str
    entries: int
    passages: int
    corrected: int
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
    cut = passages(entries, policy)
    stored = await memory.index.stored_hashes(session_id)
    # A run cut short left whole batches behind: only what is missing is embedded again.
    todo = [p for p in cut if content_hash(p.content) not in stored]
    # Offline linking: the known entities each passage names (no guessing, no new facts).
    known = NamePattern.of_entities(await memory.queries.entity_names())
    done = len(cut) - len(todo)
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start : start + EMBED_BATCH]
        vectors = await embedder.embed([p.content for p in batch])
        await memory.index.upsert(
            [
                NewChunk(
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
                for passage, vector in zip(batch, vectors, strict=True)
            ]
        )
        done += len(batch)
        if on_progress is not None:
            on_progress(done, len(cut))
    removed = await memory.index.remove_stale(session_id, {content_hash(p.content) for p in cut})
    return ProcessReport(
        session_id, len(entries), len(cut), corrected.changed, embedded=len(todo), removed=removed
    )
