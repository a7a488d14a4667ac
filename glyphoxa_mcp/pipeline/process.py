"""Processing a session: passages, links to known entities, embeddings, into the index.

Idempotent: a passage's content identifies it, so processing again stores nothing new.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from glyphoxa_mcp.pipeline.chunking import DEFAULT_POLICY, ChunkingPolicy, passages
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import NewChunk

EMBED_BATCH = 64


@dataclass(frozen=True)
class ProcessReport:
    session_id: str
    entries: int
    passages: int


async def process_session(
    memory: CampaignMemory,
    embedder: Embedder,
    session_id: str,
    policy: ChunkingPolicy = DEFAULT_POLICY,
    on_progress: Callable[[int, int], None] | None = None,
) -> ProcessReport:
    entries = await memory.log.entries(session_id)
    cut = passages(entries, policy)
    # Offline linking: the known entities each passage names (no guessing, no new facts).
    known = NamePattern.of_entities(await memory.queries.entity_names())
    for start in range(0, len(cut), EMBED_BATCH):
        batch = cut[start : start + EMBED_BATCH]
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
        if on_progress is not None:
            on_progress(start + len(batch), len(cut))
    return ProcessReport(session_id, len(entries), len(cut))
