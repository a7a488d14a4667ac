"""Command-line options whose defaults come from the settings (`cli.settings`): each falls
back to its GLYPHOXA_* variable, then to the variable's default."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NamedTuple

from glyphoxa_mcp.cli.settings import VARIABLES, GlyphoxaSettings, read_settings
from glyphoxa_mcp.config import (
    DEFAULT_EMBEDDING_DIM,
    DatabaseSettings,
    Settings,
    settings_from,
)
from glyphoxa_mcp.errors import ConfigurationError
from glyphoxa_mcp.providers.chat import ChatSettings
from glyphoxa_mcp.providers.embeddings import EmbeddingSettings

EMBEDDING_DIM_HELP = (
    "embedding dimension of a new database: "
    f"{DEFAULT_EMBEDDING_DIM} for the offline WordLlama model (the default), 384 for the "
    "offline all-MiniLM-L6-v2, or the size of an OpenAI-compatible model; unset, an existing "
    "database keeps its own"
)
# A parser's defaults record which variables its command uses (`setting:NAME`, a Binding),
# and an option given on the command line marks itself (`given:DEST`), so that the settings
# fill in only the options left out.
SETTING = "setting:"
GIVEN = "given:"


class Binding(NamedTuple):
    """A variable a command uses: through an option (its dest and flag), or directly."""

    dest: str | None
    flag: str | None


class _Given(argparse.Action):
    """Stores the value, as `store` does, and notes that it was given."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, GIVEN + self.dest, True)


def shown_default(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def env_option(
    parser: argparse._ActionsContainer, flag: str, *, env: str, help: str, **kwargs: Any
) -> None:
    """An option that falls back to the settings field of the variable `env`, then to that
    field's default (or `default`, for a field whose default is unset); --help names the
    variable."""
    variable = VARIABLES.get(env)
    if variable is None:
        raise KeyError(f"{env} is not a field of glyphoxa_mcp/cli/settings.py; add it there")
    default = variable.default
    if "default" in kwargs:
        if default is not None and kwargs["default"] != default:
            raise ValueError(f"{flag}: the default of {env} is {default!r}, set in its field")
        default = kwargs.pop("default")
    shown = f" (default: {shown_default(default)})" if default is not None else ""
    action = parser.add_argument(
        flag, action=_Given, default=default, help=f"{help} [env {env}]{shown}", **kwargs
    )
    parser.set_defaults(**{SETTING + env: Binding(action.dest, flag)})


def uses_settings(parser: argparse._ActionsContainer, *variables: str) -> None:
    """The command reads these variables itself (`settings_of(args)`), not through an option."""
    for env in variables:
        if env not in VARIABLES:
            raise KeyError(f"{env} is not a field of glyphoxa_mcp/cli/settings.py; add it there")
        parser.set_defaults(**{SETTING + env: Binding(None, None)})


def bindings(parser: argparse.ArgumentParser) -> dict[str, Binding]:
    """The variables this parser's command uses, by name (its parents' not included)."""
    return {
        env: binding
        for env in VARIABLES
        if isinstance(binding := parser.get_default(SETTING + env), Binding)
    }


def apply_settings(args: argparse.Namespace, settings: GlyphoxaSettings) -> None:
    """Fill each option left off the command line from its variable, when set, and attach
    the settings (`settings_of`). A variable the command uses holding a bad value is an
    error naming the flag, the variable and the rule; one it does not use is ignored."""
    problems = []
    for key, binding in list(vars(args).items()):
        if not key.startswith(SETTING):
            continue
        env = key.removeprefix(SETTING)
        delattr(args, key)
        if binding.dest is not None and getattr(args, GIVEN + binding.dest, False):
            continue
        if env in settings.problems:
            problems.append(settings.problems[env].describe(binding.flag))
        elif binding.dest is not None and env in settings.given:
            setattr(args, binding.dest, settings.value(env))
    for key in [key for key in vars(args) if key.startswith(GIVEN)]:
        delattr(args, key)
    if problems:
        raise ConfigurationError("Invalid setting: " + "; ".join(problems))
    args.settings = settings


def settings_of(args: argparse.Namespace) -> GlyphoxaSettings:
    """The settings `main` read when the command started (or, for arguments parsed without
    it, the environment's now)."""
    settings = getattr(args, "settings", None)
    return settings if isinstance(settings, GlyphoxaSettings) else read_settings()


def add_write_options(parser: argparse.ArgumentParser) -> None:
    env_option(
        parser,
        "--write-deadline-ms",
        env="GLYPHOXA_WRITE_DEADLINE_MS",
        help="answer a recorder's write not done by then as not stored (or maybe stored), "
        "naming what to resend",
        metavar="MS",
    )


def add_database_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("database")
    env_option(
        group,
        "--dsn",
        env="GLYPHOXA_DSN",
        help="PostgreSQL >= 15 with pgvector; unset uses the embedded server",
        metavar="URL",
    )
    env_option(
        group,
        "--data-dir",
        env="GLYPHOXA_DATA_DIR",
        help="where the embedded server keeps its data",
        metavar="DIR",
    )
    env_option(
        group, "--embedding-dim", env="GLYPHOXA_EMBEDDING_DIM", help=EMBEDDING_DIM_HELP, metavar="N"
    )


def database_settings(args: argparse.Namespace) -> DatabaseSettings:
    # `eval` has no --data-dir: it never uses the user's data directory.
    return DatabaseSettings.build(
        dsn=args.dsn, data_dir=getattr(args, "data_dir", None), embedding_dim=args.embedding_dim
    )


def add_scope_options(
    parser: argparse.ArgumentParser,
    *,
    default_campaign: str | None,
    campaign_help: str = "campaign id",
) -> None:
    """Which campaign, whose knowledge, and which tier."""
    env_option(
        parser, "--campaign", env="GLYPHOXA_CAMPAIGN", help=campaign_help, default=default_campaign
    )
    env_option(
        parser,
        "--npc",
        env="GLYPHOXA_NPC",
        help="the NPC whose knowledge applies; unset is the DM, who sees everything",
    )
    env_option(
        parser,
        "--tier",
        env="GLYPHOXA_TIER",
        help="FAST, STANDARD or DEEP",
        type=str.upper,
    )


def add_embedder_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("embeddings")
    env_option(
        group,
        "--embedder",
        env="GLYPHOXA_EMBEDDER",
        help="local or openai; unset: openai when a key or base URL is set, else local",
        metavar="NAME",
    )
    env_option(
        group,
        "--embedding-model",
        env="GLYPHOXA_EMBEDDING_MODEL",
        help="model of an OpenAI-compatible embedder (default text-embedding-3-small)",
        metavar="MODEL",
    )
    env_option(
        group,
        "--openai-base-url",
        env="GLYPHOXA_OPENAI_BASE_URL",
        help="an OpenAI-compatible server such as Ollama (http://localhost:11434/v1); "
        "the API key is read from GLYPHOXA_OPENAI_API_KEY or OPENAI_API_KEY",
        metavar="URL",
    )
    uses_settings(group, "OPENAI_BASE_URL", "GLYPHOXA_OPENAI_API_KEY", "OPENAI_API_KEY")


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("LLM (used when an API key or base URL is set)")
    env_option(
        group,
        "--llm-model",
        env="GLYPHOXA_LLM_MODEL",
        help="chat model for name correction, extraction and summaries",
        metavar="MODEL",
    )
    group.add_argument(
        "--no-llm",
        action="store_true",
        help="stay offline even with a key or base URL [env GLYPHOXA_LLM=off]",
    )
    uses_settings(group, "GLYPHOXA_LLM", "GLYPHOXA_LLM_MAX_RETRIES")


def app_settings(args: argparse.Namespace) -> Settings:
    """The application's settings from a command's flags (each falls back to its GLYPHOXA_*
    variable) and the OpenAI-compatible key and URL variables, which only the settings hold.
    A command without the embedder or LLM options gets the offline defaults for them."""
    models = settings_of(args).models
    api_key = models.api_key()
    base_url = getattr(args, "openai_base_url", None) or models.fallback_base_url
    embedding = settings_from(
        EmbeddingSettings,
        {
            "provider": getattr(args, "embedder", None),
            "model": getattr(args, "embedding_model", None),
            "base_url": base_url,
            "api_key": api_key,
        },
    )
    chat = settings_from(
        ChatSettings,
        {
            "model": getattr(args, "llm_model", None),
            "base_url": base_url,
            "api_key": api_key,
            "max_retries": models.llm_max_retries,
            # Only the commands that offer --llm-model use an LLM.
            "enabled": hasattr(args, "llm_model") and not args.no_llm and models.llm,
        },
    )
    return settings_from(
        Settings,
        {
            "database": database_settings(args),
            "embedding": embedding,
            "chat": chat,
            "write_deadline_ms": getattr(args, "write_deadline_ms", None),
        },
    )
