"""The embedding interface every provider implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.errors import ConfigurationError

DEFAULT_OPENAI_MODEL = "text-embedding-3-small"


class EmbeddingSettings(BaseModel):
    """Which embedder to use. Without a provider: OpenAI-compatible when a key or a base URL
    is configured, the offline model otherwise."""

    model_config = ConfigDict(frozen=True)

    provider: Literal["local", "openai"] | None = None
    model: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    base_url: str | None = None

    @property
    def resolved_provider(self) -> Literal["local", "openai"]:
        if self.provider is not None:
            return self.provider
        return "openai" if (self.api_key or self.base_url) else "local"


class Embedder(Protocol):
    """Turns text into unit-length vectors of a fixed dimension."""

    @property
    def model(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...


def make_embedder(settings: EmbeddingSettings, dimension: int) -> Embedder:
    """The configured embedder for a database whose vectors have `dimension` entries."""
    if settings.resolved_provider == "local":
        return offline_embedder(dimension)
    from glyphoxa_mcp.providers.openai_embeddings import OpenAIEmbedder

    return OpenAIEmbedder(
        model=settings.model or DEFAULT_OPENAI_MODEL,
        dimension=dimension,
        api_key=settings.api_key,
        base_url=settings.base_url,
    )


def offline_embedder(dimension: int) -> Embedder:
    """The offline model whose vectors the database holds: WordLlama (256 dimensions, the
    default for new databases) or all-MiniLM-L6-v2 (384, the default before it)."""
    from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
    from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder

    for model in (WordLlamaEmbedder, LocalMiniLMEmbedder):
        if model.dimension == dimension:
            return model()
    raise ConfigurationError(
        f"The database stores {dimension}-dimensional vectors, but the offline models make "
        f"{WordLlamaEmbedder.dimension}-dimensional (WordLlama) or "
        f"{LocalMiniLMEmbedder.dimension}-dimensional (all-MiniLM-L6-v2) ones. Configure the "
        "embedder the database was created with (GLYPHOXA_EMBEDDER, GLYPHOXA_EMBEDDING_MODEL), "
        "or use a new --data-dir / --dsn."
    )
