"""Synthetic embeddings shaped like a sentence model's. (pure, seeded)

Real text embeddings are not uniform on the sphere: they cluster by topic, clusters have
sub-clusters, and all of them lean towards a common direction. An HNSW index over uniform
random vectors behaves unlike one over real data (every neighbour is about equally far), so
the vectors here are drawn around topic and sub-topic centres with that shape:

- unrelated texts have a cosine similarity around 0.1, as with a sentence model;
- texts of one sub-topic around 0.5, of one topic but another sub-topic around 0.3.
"""

from __future__ import annotations

import numpy as np

from glyphoxa_mcp.providers.wordllama_embedder import DIMENSION as DEFAULT_OFFLINE_DIMENSION

# The default offline embedder's width, and so a new database's.
DIMENSION = DEFAULT_OFFLINE_DIMENSION
# How far the common direction pulls every topic centre, sub-topics from their topic, and
# single texts from their sub-topic (norms of the added offsets; see the module docstring).
COMMON_WEIGHT = 0.35
SUBTOPIC_SPREAD = 0.8
TEXT_SPREAD = 0.9


def _unit(rows: np.ndarray) -> np.ndarray:
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=-1, keepdims=True)
    return unit


class TopicSpace:
    """Topic and sub-topic centres; every vector drawn from it is a float32 unit vector."""

    def __init__(self, topics: int, subtopics: int, seed: int, dimension: int = DIMENSION) -> None:
        self.dimension = dimension
        rng = np.random.default_rng(seed)
        common = _unit(rng.standard_normal(dimension))
        centres = _unit(COMMON_WEIGHT * common + _unit(rng.standard_normal((topics, dimension))))
        offsets = _unit(rng.standard_normal((topics, subtopics, dimension)))
        self.subtopic_centres = _unit(centres[:, None, :] + SUBTOPIC_SPREAD * offsets)

    def draw(
        self, topics: np.ndarray, subtopics: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """One vector per (topic, sub-topic) pair, scattered around that sub-topic's centre."""
        centres = self.subtopic_centres[topics, subtopics]
        noise = _unit(rng.standard_normal(centres.shape))
        return _unit(centres + TEXT_SPREAD * noise).astype(np.float32)
