"""The application's settings, built once at start-up from command-line flags and the GLYPHOXA_*
variables (every variable is a field of `cli.settings`, the one model of them)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from glyphoxa_mcp.domain.wording import rule_of
from glyphoxa_mcp.errors import ConfigurationError
from glyphoxa_mcp.providers.chat import ChatSettings
from glyphoxa_mcp.providers.embeddings import EmbeddingSettings

# pgvector's HNSW index accepts at most this many dimensions.
MAX_INDEXED_DIMENSIONS = 2000
# A new database stores vectors as wide as the offline default model's (WordLlama); an
# existing one keeps the width it was created with unless a width is configured.
DEFAULT_EMBEDDING_DIM = 256
# How long a write (a recorder's append, a session fact) may take before it is answered as
# not stored (or, its commit sent, maybe stored), with what to resend.
DEFAULT_WRITE_DEADLINE_MS = 2000


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("glyphoxa-mcp"))


def check_dsn(dsn: str | None) -> str | None:
    """A PostgreSQL URL, or None for the embedded server when it is unset or blank."""
    if dsn is None or not dsn.strip():
        return None
    if not dsn.startswith(("postgres://", "postgresql://")):
        raise ValueError(
            "must start with postgresql:// or postgres:// (for example postgresql://user@host/db)"
        )
    return dsn.strip()


class DatabaseSettings(BaseModel):
    """Where the memory lives and the shape of its vectors."""

    model_config = ConfigDict(frozen=True)

    dsn: str | None = Field(
        default=None,
        description="PostgreSQL DSN; when unset, the embedded server in data_dir is used.",
    )
    data_dir: Path = Field(default_factory=default_data_dir)
    embedding_dim: int | None = Field(
        default=None,
        ge=1,
        le=MAX_INDEXED_DIMENSIONS,
        description="Unset: an existing database's own, DEFAULT_EMBEDDING_DIM for a new one.",
    )

    _check_dsn = field_validator("dsn")(check_dsn)

    @field_validator("data_dir")
    @classmethod
    def _expand_user(cls, data_dir: Path) -> Path:
        return data_dir.expanduser()

    @classmethod
    def build(cls, **values: object) -> DatabaseSettings:
        return settings_from(cls, values)


S = TypeVar("S", bound=BaseModel)


def settings_from(
    model: type[S], values: Mapping[str, object], env: Mapping[str, str] | None = None
) -> S:
    """Validate settings (unset values take the model's defaults), naming the flag and
    environment variable of any bad value (`env`: a field's variable when it is not
    GLYPHOXA_<FIELD>)."""
    given = {key: value for key, value in values.items() if value is not None}
    try:
        return model(**given)
    except ValidationError as exc:
        raise ConfigurationError(describe_settings_error(exc, env)) from exc


def flag_and_env(field: str, env: Mapping[str, str] | None = None) -> str:
    variable = (env or {}).get(field, f"GLYPHOXA_{field.upper()}")
    return f"--{field.replace('_', '-')} / {variable}"


def describe_settings_error(exc: ValidationError, env: Mapping[str, str] | None = None) -> str:
    problems = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        problems.append(
            f"{flag_and_env(field, env)}: {rule_of(error)} (got {error.get('input')!r})"
        )
    return "Invalid setting: " + "; ".join(problems)


class Settings(BaseModel):
    """Everything the application is configured with, built once at start-up from flags and
    GLYPHOXA_* variables (`cli.options.app_settings`)."""

    model_config = ConfigDict(frozen=True)

    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    chat: ChatSettings = Field(default_factory=lambda: ChatSettings(enabled=False))
    write_deadline_ms: int = Field(default=DEFAULT_WRITE_DEADLINE_MS, gt=0, le=600_000)
