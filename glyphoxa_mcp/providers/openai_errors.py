"""What the openai client raises, as our errors: each says which setting to fix."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import openai

from glyphoxa_mcp.errors import ConfigurationError, ProviderError


@contextlib.contextmanager
def provider_errors(role: str, model: str, model_setting: str) -> Iterator[None]:
    """`role` is what the provider is for ("embedding", "LLM"); `model_setting` the
    environment variable that chooses the model."""
    try:
        yield
    except openai.AuthenticationError as exc:
        raise ConfigurationError(
            f"The {role} provider refused the API key ({exc.status_code}). Set "
            "GLYPHOXA_OPENAI_API_KEY or OPENAI_API_KEY."
        ) from exc
    except openai.NotFoundError as exc:
        raise ConfigurationError(
            f"The {role} provider has no model {model!r}. Set {model_setting}."
        ) from exc
    except (openai.OpenAIError, ValueError) as exc:
        # ValueError: the client lets a JSONDecodeError through for an unparseable body.
        raise ProviderError(f"{role} request to {model} failed: {exc}") from exc
