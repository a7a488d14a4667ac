from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from glyphoxa_mcp.errors import ConfigurationError, InvalidInputError
from glyphoxa_mcp.providers import wordllama_embedder
from glyphoxa_mcp.providers.embeddings import EmbeddingSettings, make_embedder
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder, shared_model

# WordLlama 0.4's own vectors for sample texts (tests/fixtures/wordllama_reference/record.py).
REFERENCE = Path(__file__).parents[1] / "fixtures" / "wordllama_reference" / "reference.json"


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    recorded = json.loads(REFERENCE.read_text())
    return recorded["texts"], np.array(recorded["vectors"], dtype=np.float32)


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


def test_the_vectors_are_wordllamas_own(reference: tuple[list[str], np.ndarray]) -> None:
    texts, expected = reference
    vectors = shared_model().mean_vectors(texts)
    blank = np.linalg.norm(expected, axis=1) == 0
    assert blank.tolist() == (np.linalg.norm(vectors, axis=1) == 0).tolist()
    assert blank.sum() == 1  # "" has no tokens; " " and "!!!" have
    cosine = (vectors[~blank] * expected[~blank]).sum(axis=1) / (
        np.linalg.norm(vectors[~blank], axis=1) * np.linalg.norm(expected[~blank], axis=1)
    )
    assert cosine.min() >= 1 - 1e-5
    assert np.allclose(vectors, expected, rtol=0, atol=1e-6)


async def test_the_embedder_gives_the_reference_vectors_made_unit_length(
    embedder: WordLlamaEmbedder, reference: tuple[list[str], np.ndarray]
) -> None:
    texts, expected = reference
    worded = [i for i, row in enumerate(expected) if row.any()]
    vectors = np.array(await embedder.embed([texts[i] for i in worded]))
    unit = expected[worded] / np.linalg.norm(expected[worded], axis=1, keepdims=True)
    assert np.allclose(vectors, unit, rtol=0, atol=1e-6)


def test_texts_looked_up_in_smaller_groups_get_the_same_vectors(
    reference: tuple[list[str], np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    texts, _ = reference
    whole = shared_model().mean_vectors(texts)
    for budget in (1, 7, 64):
        monkeypatch.setattr(wordllama_embedder, "TOKENS_PER_LOOKUP", budget)
        assert np.array_equal(shared_model().mean_vectors(texts), whole)


def test_the_model_is_read_from_files_without_importing_the_wordllama_package() -> None:
    shared_model()
    assert "wordllama" not in sys.modules


def test_missing_model_files_say_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wordllama_embedder, "WEIGHTS_DISTRIBUTION", "no-such-distribution")
    with pytest.raises(ConfigurationError, match="reinstall glyphoxa-mcp"):
        wordllama_embedder.model_files()
    monkeypatch.undo()
    monkeypatch.setattr(wordllama_embedder, "WEIGHTS_FILE", "wordllama/weights/missing.bin")
    with pytest.raises(ConfigurationError, match=r"missing \(.*missing\.bin\)"):
        wordllama_embedder.model_files()
