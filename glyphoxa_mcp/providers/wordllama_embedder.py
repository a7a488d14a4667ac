"""The offline default: WordLlama's l2_supercat model (256 dimensions), run in NumPy.

The model is a table of static token vectors: a text's vector is the mean of its tokens'
(Llama 2's tokenizer, no special tokens, no truncation), made unit length. That is all
`wordllama` 0.4 computes for `WordLlama.load("l2_supercat", dim=256).embed(texts)`, and this
module computes the same vectors (tests/providers/test_wordllama_embedder.py holds it to
vectors recorded from wordllama 0.4) with `tokenizers`, `safetensors` and NumPy alone, which
have wheels everywhere the embedded engine runs; wordllama 0.4 has none for Linux aarch64.

The weights (16 MB, float16) and the tokenizer are read from the files of the `wordllama`
distribution, pinned to 0.2.2.post0: its wheel is pure Python (py3-none-any) and carries
exactly the files 0.4 ships (the weights byte for byte, the tokenizer as the same JSON). Its
code is never imported. Nothing touches the network, and a sentence costs a table lookup and
an average: thousands of passages a second on two cores (BENCHMARKS.md, "Offline embedder").
"""

from __future__ import annotations

import functools
import importlib.metadata
import itertools
from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np

from glyphoxa_mcp.errors import ConfigurationError, InvalidInputError

# What a database records as the model that made its vectors: the same since WordLlama was
# first the default, so databases made with the wordllama package keep matching.
MODEL_NAME = "wordllama-l2-supercat-256"
DIMENSION = 256
WEIGHTS_DISTRIBUTION = "wordllama"
WEIGHTS_FILE = "wordllama/weights/l2_supercat_256.safetensors"
TOKENIZER_FILE = "wordllama/tokenizers/l2_supercat_tokenizer_config.json"
TENSOR = "embedding.weight"
# Padded tokens per table lookup: bounds the gathered token vectors (32 MB) on a large batch.
TOKENS_PER_LOOKUP = 32_768


def model_files() -> tuple[Path, Path]:
    """The weights and tokenizer files, from the installed wordllama distribution."""
    try:
        distribution = importlib.metadata.distribution(WEIGHTS_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ConfigurationError(
            "The offline embedding model is not installed; reinstall glyphoxa-mcp (its "
            "weights come with the wordllama package it depends on), or configure an "
            "OpenAI-compatible embedder."
        ) from exc
    files = tuple(
        Path(str(distribution.locate_file(name))) for name in (WEIGHTS_FILE, TOKENIZER_FILE)
    )
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        raise ConfigurationError(
            f"The offline embedding model's files are missing ({', '.join(missing)}); "
            "reinstall glyphoxa-mcp, or configure an OpenAI-compatible embedder."
        )
    return files[0], files[1]


class StaticModel:
    """Token vectors mean-pooled; synchronous and thread-safe (nothing changes after load)."""

    def __init__(self, weights: Path, tokenizer: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        # float16 on disk, float32 here as wordllama holds it (the conversion is exact).
        table = load_file(str(weights))[TENSOR]
        # One zero row past the vocabulary pads a group of texts to its longest.
        self.padding = table.shape[0]
        self.table = np.zeros((table.shape[0] + 1, table.shape[1]), dtype=np.float32)
        self.table[: self.padding] = table
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        vocabulary = self.tokenizer.get_vocab_size(with_added_tokens=True)
        if table.shape != (vocabulary, DIMENSION):
            raise ConfigurationError(
                f"The offline embedding model's weights have shape {table.shape}, not "
                f"({vocabulary}, {DIMENSION}); reinstall glyphoxa-mcp."
            )

    def mean_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Each text's token vectors averaged (a zero vector for a text without tokens).

        Texts are looked up in groups of about the same length, each padded to its longest
        with a zero row, and summed along the tokens in order: the very sums wordllama's
        masked average makes, to the last bit (np.add.reduceat would add in another order).
        """
        encoded = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        lengths = np.fromiter((len(e.ids) for e in encoded), dtype=np.intp, count=len(texts))
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        for group in _groups(lengths):
            width = int(lengths[group[-1]])
            if width == 0:
                continue
            flat = np.fromiter(
                itertools.chain.from_iterable(encoded[i].ids for i in group),
                dtype=np.intp,
                count=int(lengths[group].sum()),
            )
            ids = np.full((len(group), width), self.padding, dtype=np.intp)
            ids[np.arange(width) < lengths[group, None]] = flat
            sums = self.table[ids].sum(axis=1, dtype=np.float32)
            out[group] = sums / np.maximum(lengths[group], 1)[:, None].astype(np.float32)
        return out


def _groups(lengths: np.ndarray) -> list[np.ndarray]:
    """Indices by token count, cut into groups of at most TOKENS_PER_LOOKUP padded tokens
    (a longer text is a group of its own). (pure)"""
    order = np.argsort(lengths, kind="stable")
    ascending = lengths[order].tolist()
    groups: list[np.ndarray] = []
    first = 0
    for end in range(1, len(order) + 1):
        if end == len(order) or (end + 1 - first) * ascending[end] > TOKENS_PER_LOOKUP:
            groups.append(order[first:end])
            first = end
    return groups


@functools.cache
def shared_model() -> StaticModel:
    """Loaded once per process (about 32 MB in memory)."""
    return StaticModel(*model_files())


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
    vectors = shared_model().mean_vectors(texts)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if not norms.all():
        blank = texts[int(np.flatnonzero(norms == 0)[0])]
        raise InvalidInputError(f"Cannot embed {blank[:40]!r}: it has no words.")
    unit: np.ndarray = vectors / norms
    return unit
