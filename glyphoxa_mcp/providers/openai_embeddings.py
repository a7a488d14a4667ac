"""Embeddings from OpenAI or any OpenAI-compatible server (Ollama, vLLM, LM Studio)."""

from __future__ import annotations

from collections.abc import Sequence

import openai

from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import DatabaseError, ProviderError
from glyphoxa_mcp.providers.chat import DEFAULT_MAX_RETRIES
from glyphoxa_mcp.providers.openai_errors import provider_errors

BATCH_SIZE = 256
# Models that can shorten their vectors on request (Matryoshka training).
SHORTENABLE = ("text-embedding-3-",)


class OpenAIEmbedder:
    def __init__(
        self,
        *,
        model: str,
        dimension: int,
        api_key: str | None,
        base_url: str | None,
        timeout_s: float = 30.0,
    ) -> None:
        self.model = model
        self.dimension = dimension
        self._shorten = model.startswith(SHORTENABLE)
        self._client = openai.AsyncOpenAI(
            # Local servers ignore the key, but the client insists on one.
            api_key=api_key or "not-needed",
            base_url=base_url,
            max_retries=DEFAULT_MAX_RETRIES,
            timeout=timeout_s,
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            vectors.extend(await self._embed_batch(list(texts[start : start + BATCH_SIZE])))
        return vectors

    async def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        with provider_errors("embedding", self.model, "GLYPHOXA_EMBEDDING_MODEL"):
            if self._shorten:
                response = await self._client.embeddings.create(
                    model=self.model, input=batch, dimensions=self.dimension
                )
            else:
                response = await self._client.embeddings.create(model=self.model, input=batch)
        ordered = sorted(response.data, key=lambda item: item.index)
        if len(ordered) != len(batch):
            raise ProviderError(
                f"The embedding provider returned {counted(len(ordered), 'vector')} for "
                f"{counted(len(batch), 'text')}."
            )
        vectors = [list(item.embedding) for item in ordered]
        if any(len(v) != self.dimension for v in vectors):
            raise DatabaseError(
                f"{self.model} returns {len(vectors[0])}-dimensional vectors but the database "
                f"stores {self.dimension}. Use a matching model or a new database "
                "(--data-dir / --dsn) with GLYPHOXA_EMBEDDING_DIM set to the model's size."
            )
        return vectors
