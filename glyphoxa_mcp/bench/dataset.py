"""A whole synthetic campaign from a spec and a seed: the same spec, the same rows. (pure)"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

import numpy as np

from glyphoxa_mcp.bench import word_pools
from glyphoxa_mcp.bench.graph_data import (
    companion_npc,
    generate_entities,
    generate_facts,
    generate_relationships,
)
from glyphoxa_mcp.bench.rows import (
    ChunkRow,
    EntityRow,
    EntryRow,
    FactRow,
    RelationshipRow,
    SceneRow,
    SessionRow,
)
from glyphoxa_mcp.bench.spec import DatasetSpec
from glyphoxa_mcp.bench.transcript_data import generate_transcripts, session_plan
from glyphoxa_mcp.bench.vectors import TopicSpace
from glyphoxa_mcp.domain.vocabulary import EntityType

log = logging.getLogger(__name__)
CAMPAIGN_ID = "bench"


@dataclass(frozen=True)
class Dataset:
    spec: DatasetSpec
    sessions: tuple[SessionRow, ...]
    entities: tuple[EntityRow, ...]
    relationships: tuple[RelationshipRow, ...]
    entries: tuple[EntryRow, ...]
    # Each session's scenes, with the NPCs present; the campaign is witnessed (sql/032).
    scenes: tuple[SceneRow, ...]
    chunks: tuple[ChunkRow, ...]
    chunk_vectors: np.ndarray
    facts: tuple[FactRow, ...]
    fact_vectors: np.ndarray
    # As `backfill-embeddings` would store them: search_facts ranks relationships by them.
    relationship_vectors: np.ndarray
    space: TopicSpace
    # The NPC whose scope is measured: central, in the session being played and in some
    # scenes of 40% of the others, and told some secrets.
    bench_npc: str
    # Told every secret the benchmarked NPC is told, and present in every scene: the witness
    # rule lets it read every line, so its rows are the benchmarked NPC's rows as they would
    # be without the rule (as in a shared campaign), measured in the same run.
    companion_npc: str

    @property
    def campaign_name(self) -> str:
        """Stored as the campaign's name, so a later run can tell whether the loaded
        campaign is this dataset."""
        return f"glyphoxa bench {self.spec.fingerprint}"

    def counts(self) -> dict[str, int]:
        return {
            "sessions": len(self.sessions),
            "entries": len(self.entries),
            "scenes": len(self.scenes),
            "chunks": len(self.chunks),
            "entities": len(self.entities),
            "relationships": len(self.relationships),
            "facts": len(self.facts),
        }


def _vectors(space: TopicSpace, topics: list[tuple[int, int]], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if not topics:
        return np.empty((0, space.dimension), dtype=np.float32)
    pairs = np.array(topics)
    return space.draw(pairs[:, 0], pairs[:, 1], rng)


def generate(spec: DatasetSpec) -> Dataset:
    plan = session_plan(spec.sessions)
    entities, bench_npc = generate_entities(spec.entities, spec.seed)
    companion = companion_npc([e.id for e in entities if e.type is EntityType.NPC])
    if companion is None:
        raise ValueError(f"{spec.entities} entities hold too few NPCs for a companion")
    transcripts = generate_transcripts(
        plan, spec.entries, entities, bench_npc, spec.seed, companion
    )
    sessions = transcripts.sessions
    relationships = generate_relationships(
        entities, spec.relationships, sessions, transcripts.involved, bench_npc, spec.seed
    )
    facts, fact_topics = generate_facts(
        spec.facts, entities, sessions, transcripts.involved, bench_npc, spec.seed
    )
    space = TopicSpace(len(word_pools.TOPIC_NAMES), word_pools.SUBTOPICS_PER_TOPIC, spec.seed)
    # A relationship's sentence names two entities and a type, no topic: one at random.
    rng = random.Random(spec.seed * 2 + 3)
    relationship_topics = [
        (rng.randrange(len(word_pools.TOPIC_NAMES)), rng.randrange(word_pools.SUBTOPICS_PER_TOPIC))
        for _ in relationships
    ]
    return Dataset(
        spec=spec,
        sessions=sessions,
        entities=tuple(entities),
        relationships=tuple(relationships),
        entries=transcripts.entries,
        scenes=transcripts.scenes,
        chunks=transcripts.chunks,
        chunk_vectors=_vectors(space, list(transcripts.chunk_topics), spec.seed * 2 + 1),
        facts=tuple(facts),
        fact_vectors=_vectors(space, fact_topics, spec.seed * 2 + 2),
        relationship_vectors=_vectors(space, relationship_topics, spec.seed * 2 + 3),
        space=space,
        bench_npc=bench_npc,
        companion_npc=companion,
    )
