from __future__ import annotations

import numpy as np
import pytest

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.providers.embeddings import EmbeddingSettings, make_embedder
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


async def test_vectors_are_unit_length_and_256_wide(embedder: WordLlamaEmbedder) -> None:
    vectors = np.array(await embedder.embed(["Grimjaw forges a blade.", "Hello", "!!!"]))
    assert vectors.shape == (3, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert await embedder.embed([]) == []


async def test_related_text_is_closer_than_unrelated_text(embedder: WordLlamaEmbedder) -> None:
    caravan, wagons, cheese = np.array(
        await embedder.embed(
            [
                "The caravan left for Saltmere three days ago.",
                "The merchant caravan departed for the coast.",
                "I like cheese sandwiches.",
            ]
        )
    )
    assert caravan @ wagons > caravan @ cheese + 0.2


async def test_a_batch_gives_each_text_its_own_vector(embedder: WordLlamaEmbedder) -> None:
    texts = ["short", "a considerably longer sentence about the old mill by the river", "mid"]
    together = np.array(await embedder.embed(texts))
    alone = np.array([(await embedder.embed([t]))[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-6)


async def test_text_without_words_is_refused(embedder: WordLlamaEmbedder) -> None:
    with pytest.raises(InvalidInputError, match="no words"):
        await embedder.embed(["fine", ""])


def test_the_offline_model_is_the_one_the_database_was_created_with() -> None:
    assert isinstance(make_embedder(EmbeddingSettings(), 256), WordLlamaEmbedder)
    assert isinstance(make_embedder(EmbeddingSettings(provider="local"), 384), LocalMiniLMEmbedder)
