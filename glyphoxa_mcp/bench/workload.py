"""What the measured calls ask: varied arguments like a voice model's, drawn from the
dataset. (pure, seeded)

Each tool gets a rotation of argument sets (names, misspellings, types, neighbourhoods,
sessions, queries), so no figure comes from asking one thing over and over. Search queries
come with the vectors an embedder would give them in this dataset's topic space, so that the
embedding can be left out of a search's latency and measured on its own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from glyphoxa_mcp.bench import word_pools
from glyphoxa_mcp.bench.dataset import Dataset
from glyphoxa_mcp.bench.rows import EntityRow, Weighted
from glyphoxa_mcp.bench.sentences import NameDraws, fill
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.server.resource_uris import hot_uri

VARIANTS = 64
RELATIONS = ("LOCATED_AT", "MEMBER_OF", "KNOWS", "ALLIED_WITH", "OWNS")
MAX_SESSIONS_AGO = 10


@dataclass(frozen=True)
class Workload:
    """Arguments for each measured call, in the order they are used."""

    npc_id: str | None
    query_entities: tuple[dict[str, Any], ...]
    session_summary: tuple[dict[str, Any], ...]
    search_facts: tuple[dict[str, Any], ...]
    search_sessions: tuple[dict[str, Any], ...]
    hot_uris: tuple[str, ...]
    # The vector of each query text above, as the dataset's embedder would make it.
    query_vectors: dict[str, list[float]]

    @property
    def queries(self) -> list[str]:
        return sorted(self.query_vectors)


def misspell(name: str, rng: random.Random) -> str:
    """How speech-to-text may hear a name: a letter dropped or doubled, or two swapped;
    never the name itself."""
    for _ in range(20):
        position = rng.randrange(1, max(2, len(name) - 1))
        kind = rng.choice(("drop", "double", "swap"))
        if kind == "drop":
            heard = name[:position] + name[position + 1 :]
        elif kind == "double":
            heard = name[:position] + name[position] + name[position:]
        else:
            heard = (
                name[: position - 1] + name[position] + name[position - 1] + name[position + 1 :]
            )
        if heard != name:
            return heard
    return name[1:]


class _Draws:
    def __init__(self, dataset: Dataset, seed: int) -> None:
        self.rng = random.Random(f"workload:{seed}")
        self.dataset = dataset
        self.names = NameDraws(dataset.entities, self.rng)
        self.anything = Weighted([e for e in dataset.entities if e.type is not EntityType.PLAYER])
        self.with_aliases = [e for e in dataset.entities if e.aliases]
        self.vectors: dict[str, list[float]] = {}
        self.np_rng = np.random.default_rng(seed)

    def entity(self) -> EntityRow:
        return self.anything.draw(self.rng)

    def query(self, templates: tuple[str, ...]) -> str:
        """A query text, registered with a vector near its topic."""
        rng = self.rng
        topic = rng.randrange(len(word_pools.TOPIC_NAMES))
        subtopic = rng.randrange(word_pools.SUBTOPICS_PER_TOPIC)
        text, _ = fill(
            rng.choice(templates), rng, word_pools.topic_words(topic, subtopic), self.names
        )
        if text not in self.vectors:
            vector = self.dataset.space.draw(np.array([topic]), np.array([subtopic]), self.np_rng)[
                0
            ]
            self.vectors[text] = vector.tolist()
        return text


def _entity_queries(draws: _Draws) -> dict[str, Any]:
    rng = draws.rng
    roll = rng.random()
    if roll < 0.35:
        return {"name": draws.entity().name}
    if roll < 0.6:
        return {"name": misspell(draws.entity().name, rng)}
    if roll < 0.7 and draws.with_aliases:
        return {"name": rng.choice(draws.with_aliases).aliases[0]}
    if roll < 0.8:
        return {"type": rng.choice([t.value for t in EntityType]), "limit": 10}
    asked: dict[str, Any] = {"related_to": draws.entity().name, "depth": rng.choice((1, 2))}
    if rng.random() < 0.4:
        asked["relation"] = rng.choice(RELATIONS)
    return asked


def _summary_queries(draws: _Draws) -> dict[str, Any]:
    finished = [s for s in draws.dataset.sessions if s.ended_at is not None]
    if finished and draws.rng.random() < 0.5:
        return {"sessions_ago": draws.rng.randint(1, min(MAX_SESSIONS_AGO, len(finished)))}
    return {"session_id": draws.rng.choice(draws.dataset.sessions).id}


def _fact_queries(draws: _Draws) -> dict[str, Any]:
    rng = draws.rng
    asked: dict[str, Any] = {"query": draws.query(word_pools.QUERY_LINES), "top_k": 5}
    roll = rng.random()
    if roll < 0.2:
        asked["entity"] = draws.entity().name
    elif roll < 0.3:
        asked["after"] = f"day {rng.randint(1, 2 * len(draws.dataset.sessions))}"
    return asked


def _session_queries(draws: _Draws) -> dict[str, Any]:
    rng = draws.rng
    asked: dict[str, Any] = {"query": draws.query(word_pools.QUERY_LINES), "top_k": 5}
    roll = rng.random()
    if roll < 0.1:
        asked["session_id"] = rng.choice(draws.dataset.sessions).id
    elif roll < 0.2:
        asked["speaker"] = rng.choice(word_pools.PLAYER_NAMES[:4])
    return asked


def build_workload(dataset: Dataset, npc_id: str | None, seed: int = 0) -> Workload:
    """The calls for a server in `npc_id`'s scope (None: the DM's)."""
    draws = _Draws(dataset, seed)
    if npc_id is None:
        npcs = Weighted([e.id for e in dataset.entities if e.type is EntityType.NPC])
        hot = tuple(hot_uri(npcs.draw(draws.rng)) for _ in range(VARIANTS))
    else:
        hot = (hot_uri(npc_id),)
    return Workload(
        npc_id=npc_id,
        query_entities=tuple(_entity_queries(draws) for _ in range(VARIANTS)),
        session_summary=tuple(_summary_queries(draws) for _ in range(VARIANTS)),
        search_facts=tuple(_fact_queries(draws) for _ in range(VARIANTS)),
        search_sessions=tuple(_session_queries(draws) for _ in range(VARIANTS)),
        hot_uris=hot,
        query_vectors=draws.vectors,
    )
