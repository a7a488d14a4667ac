"""The offline default: WordLlama (256 dimensions), static token embeddings mean-pooled.

WordLlama's wheel on PyPI carries its weights (the l2_supercat model, 16 MB) and tokenizer,
and is loaded from the package folder with downloads disabled, so it never touches the
network. A sentence costs a table lookup and an average instead of a transformer pass:
thousands of passages a second on two cores, where all-MiniLM-L6-v2 manages tens (see
BENCHMARKS.md, "Offline embedder").
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import numpy as np

from glyphoxa_mcp.errors import ConfigurationError, InvalidInputError

MODEL_NAME = "wordllama-l2-supercat-256"
DIMENSION = 256


@functools.cache
def shared_model() -> Any:
    """Loaded once per process (about 16 MB of weights)."""
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError as exc:
        raise ConfigurationError(
            "The offline embedding model is not installed; reinstall glyphoxa-mcp "
            "(it depends on wordllama), or configure an OpenAI-compatible embedder."
        ) from exc
    package = Path(wordllama.__file__).resolve().parent
    return WordLlama.load(
        config="l2_supercat", dim=DIMENSION, cache_dir=package, disable_download=True
    )


class WordLlamaEmbedder:
    model = MODEL_NAME
    dimension = DIMENSION

    def __init__(self) -> None:
        shared_model()  # fail at start-up, not at the first search

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = await anyio.to_thread.run_sync(_embed, list(texts))
        listed: list[list[float]] = vectors.tolist()
        return listed


def _embed(texts: list[str]) -> np.ndarray:
    vectors = shared_model().embed(texts, norm=False)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if not norms.all():
        blank = texts[int(np.flatnonzero(norms == 0)[0])]
        raise InvalidInputError(f"Cannot embed {blank[:40]!r}: it has no words.")
    unit: np.ndarray = vectors / norms
    return unit
