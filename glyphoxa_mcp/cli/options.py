"""Command-line options whose defaults come from GLYPHOXA_* environment variables."""

from __future__ import annotations

import argparse
import os
from typing import Any

from glyphoxa_mcp.config import (
    DEFAULT_EMBEDDING_DIM,
    DEFAULT_WRITE_DEADLINE_MS,
    DatabaseSettings,
    Settings,
    default_data_dir,
    settings_from,
)
from glyphoxa_mcp.providers.chat import DEFAULT_CHAT_MODEL, ChatSettings
from glyphoxa_mcp.providers.embeddings import EmbeddingSettings

EMBEDDING_DIM_HELP = (
    "embedding dimension of a new database: "
    f"{DEFAULT_EMBEDDING_DIM} for the offline WordLlama model (the default), 384 for the "
    "offline all-MiniLM-L6-v2, or the size of an OpenAI-compatible model; unset, an existing "
    "database keeps its own"
)


def env_option(
    parser: argparse._ActionsContainer, flag: str, *, env: str, help: str, **kwargs: Any
) -> None:
    """An option that falls back to `env`, then to its default; --help names the variable."""
    default = kwargs.pop("default", None)
    shown = f" (default: {default})" if default is not None else ""
    parser.add_argument(
        flag, default=os.environ.get(env, default), help=f"{help} [env {env}]{shown}", **kwargs
    )


def add_write_options(parser: argparse.ArgumentParser) -> None:
    env_option(
        parser,
        "--write-deadline-ms",
        env="GLYPHOXA_WRITE_DEADLINE_MS",
        help="answer a recorder's write not done by then as not stored (or maybe stored), "
        "naming what to resend",
        default=DEFAULT_WRITE_DEADLINE_MS,
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
        default=str(default_data_dir()),
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


def add_scope_options(parser: argparse.ArgumentParser, *, default_campaign: str | None) -> None:
    """Which campaign, whose knowledge, and which tier."""
    env_option(
        parser, "--campaign", env="GLYPHOXA_CAMPAIGN", help="campaign id", default=default_campaign
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
        default="STANDARD",
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


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("LLM (used when an API key or base URL is set)")
    env_option(
        group,
        "--llm-model",
        env="GLYPHOXA_LLM_MODEL",
        help="chat model for name correction, extraction and summaries",
        default=DEFAULT_CHAT_MODEL,
        metavar="MODEL",
    )
    group.add_argument(
        "--no-llm",
        action="store_true",
        default=os.environ.get("GLYPHOXA_LLM", "").lower() in {"off", "0", "false", "no"},
        help="stay offline even with a key or base URL [env GLYPHOXA_LLM=off]",
    )


def app_settings(args: argparse.Namespace) -> Settings:
    """The application's settings from a command's flags (each falls back to its GLYPHOXA_*
    variable) and the OpenAI-compatible key and URL variables, read here and nowhere else.
    A command without the embedder or LLM options gets the offline defaults for them."""
    api_key = os.environ.get("GLYPHOXA_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY")
    base_url = getattr(args, "openai_base_url", None) or os.environ.get("OPENAI_BASE_URL")
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
            "max_retries": os.environ.get("GLYPHOXA_LLM_MAX_RETRIES"),
            # Only the commands that offer --llm-model use an LLM.
            "enabled": hasattr(args, "llm_model") and not args.no_llm,
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
