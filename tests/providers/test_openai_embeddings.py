from __future__ import annotations

import pytest

from glyphoxa_mcp.errors import ConfigurationError, DatabaseError, ProviderError
from glyphoxa_mcp.providers.embeddings import EmbeddingSettings, make_embedder
from glyphoxa_mcp.providers.openai_embeddings import OpenAIEmbedder
from tests.providers.fake_openai import embeddings, garbage, rate_limited, serve, unauthorised


def embedder(
    base_url: str, model: str = "text-embedding-3-small", dimension: int = 8
) -> OpenAIEmbedder:
    return OpenAIEmbedder(model=model, dimension=dimension, api_key="sk-test", base_url=base_url)


async def test_vectors_come_back_in_input_order_with_the_dimension_asked() -> None:
    with serve(embeddings(8)) as fake:
        vectors = await embedder(fake.base_url).embed(["a", "bbb", "cc"])
    assert [v.index(1.0) for v in vectors] == [1, 3, 2]
    assert fake.requests[0]["dimensions"] == 8
    assert fake.requests[0]["model"] == "text-embedding-3-small"


async def test_a_rate_limit_is_retried_with_backoff() -> None:
    with serve(rate_limited, rate_limited, embeddings(8)) as fake:
        vectors = await embedder(fake.base_url).embed(["hello"])
    assert len(fake.requests) == 3 and len(vectors) == 1


async def test_large_inputs_are_sent_in_batches() -> None:
    with serve(embeddings(8)) as fake:
        vectors = await embedder(fake.base_url).embed([f"t{i}" for i in range(600)])
    assert len(vectors) == 600
    assert [len(r["input"]) for r in fake.requests] == [256, 256, 88]


async def test_models_that_cannot_shorten_must_match_the_database() -> None:
    with serve(embeddings(768)) as fake:
        ollama = embedder(fake.base_url, model="nomic-embed-text", dimension=384)
        with pytest.raises(DatabaseError, match="returns 768-dimensional vectors"):
            await ollama.embed(["hello"])
    assert "dimensions" not in fake.requests[0]


async def test_a_refused_key_says_which_variable_to_set() -> None:
    with serve(unauthorised) as fake, pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        await embedder(fake.base_url).embed(["hello"])


async def test_a_garbage_reply_is_a_provider_error() -> None:
    with serve(garbage) as fake, pytest.raises(ProviderError, match="failed"):
        await embedder(fake.base_url).embed(["hello"])


def test_a_key_or_base_url_selects_the_openai_provider() -> None:
    assert EmbeddingSettings().resolved_provider == "local"
    assert EmbeddingSettings(api_key="sk").resolved_provider == "openai"
    assert EmbeddingSettings(base_url="http://localhost:11434/v1").resolved_provider == "openai"
    assert EmbeddingSettings(provider="local", api_key="sk").resolved_provider == "local"
    chosen = make_embedder(EmbeddingSettings(base_url="http://127.0.0.1:9/v1"), 384)
    assert isinstance(chosen, OpenAIEmbedder) and chosen.dimension == 384


def test_the_offline_model_refuses_a_database_of_another_dimension() -> None:
    with pytest.raises(ConfigurationError, match="384-dimensional"):
        make_embedder(EmbeddingSettings(provider="local"), 1536)
