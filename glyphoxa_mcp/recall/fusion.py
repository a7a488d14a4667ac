"""Reciprocal rank fusion: one ranking from several, robust to their different scores. (pure)"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

# The usual constant from Cormack et al. (2009): damps the weight of the very top ranks.
RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[K]],
    weights: Mapping[str, float] | None = None,
    k: int = RRF_K,
) -> list[tuple[K, float, tuple[str, ...]]]:
    """(key, score, names of the rankings that found it), best first; ties keep first-seen.

    Each ranking adds weight / (k + rank); a smaller `k` gives its top ranks more say."""
    scores: dict[K, float] = {}
    found_by: dict[K, list[str]] = {}
    for name, ranking in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            found_by.setdefault(key, []).append(name)
    order = sorted(scores, key=lambda key: -scores[key])
    return [(key, scores[key], tuple(found_by[key])) for key in order]
