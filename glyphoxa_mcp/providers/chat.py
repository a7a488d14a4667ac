"""An LLM for the background pipeline: OpenAI or any OpenAI-compatible server (Ollama, vLLM).

Used for name correction (stage 2), entity extraction and summaries; never on the request
path of a tool. Replies are JSON objects, validated by whoever asked.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_CHAT_MODEL = "gpt-4o-mini"
# After a request could not reach the LLM (retries included), the next ones fail at once
# for this long: a session of 2,000 lines with the LLM down ends in one timeout, not 2,000.
UNREACHABLE_PAUSE_S = 30.0
# The OpenAI client retries 429s, 5xx and lost connections with exponential backoff,
# honouring Retry-After (the embedder uses the same count).
DEFAULT_MAX_RETRIES = 5


class ChatSettings(BaseModel):
    """Which LLM to use; none without an API key or a base URL (the pipeline runs offline)."""

    model_config = ConfigDict(frozen=True)

    model: str = DEFAULT_CHAT_MODEL
    api_key: str | None = Field(default=None, repr=False)
    base_url: str | None = None
    temperature: float = Field(0.1, ge=0, le=2)
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(DEFAULT_MAX_RETRIES, ge=0, le=10)
    enabled: bool = True

    @property
    def configured(self) -> bool:
        return self.enabled and bool(self.api_key or self.base_url)


class ChatModel:
    def __init__(self, settings: ChatSettings) -> None:
        # Imported here: the openai package takes a while to import, and only the pipeline's
        # LLM paths need it.
        import openai

        self.settings = settings
        self.model = settings.model
        self._client = openai.AsyncOpenAI(
            api_key=settings.api_key or "not-needed",
            base_url=settings.base_url,
            max_retries=settings.max_retries,
            timeout=settings.timeout_s,
        )
        self._unreachable_until = 0.0

    async def json_reply(self, system: str, user: str) -> dict[str, Any] | None:
        """The model's reply as a JSON object, or None when it is not one."""
        import openai

        from glyphoxa_mcp.errors import ProviderError
        from glyphoxa_mcp.providers.openai_errors import provider_errors

        if time.monotonic() < self._unreachable_until:
            raise ProviderError(f"LLM {self.model} was unreachable moments ago; not asked again.")
        try:
            with provider_errors("LLM", self.model, "GLYPHOXA_LLM_MODEL"):
                response = await self._client.chat.completions.create(
                    model=self.model,
                    temperature=self.settings.temperature,
                    response_format={"type": "json_object"},
                    messages=[
                        {"role": "system", "content": system},
                        {"role": "user", "content": user},
                    ],
                )
        except ProviderError as exc:
            if isinstance(exc.__cause__, openai.APIConnectionError):
                self._unreachable_until = time.monotonic() + UNREACHABLE_PAUSE_S
            raise
        if not response.choices:
            return None
        content = response.choices[0].message.content or ""
        try:
            reply = json.loads(_without_fences(content))
        except json.JSONDecodeError:
            return None
        return reply if isinstance(reply, dict) else None


def _without_fences(content: str) -> str:
    # Some OpenAI-compatible servers wrap JSON in a Markdown code fence despite the format.
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text
