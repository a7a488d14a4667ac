"""Command-line options whose defaults come from GLYPHOXA_* environment variables."""

from __future__ import annotations

import argparse
import os
from typing import Any

from glyphoxa_mcp.config import DEFAULT_EMBEDDING_DIM, DatabaseSettings, default_data_dir

EMBEDDING_DIM_HELP = (
    "embedding dimension of a new database: "
    f"{DEFAULT_EMBEDDING_DIM} for the offline WordLlama model (the default), 384 for the "
    "offline all-MiniLM-L6-v2, or the size of an OpenAI-compatible model; unset, an existing "
    "database keeps its own"
)


def env_option(
    parser: argparse.ArgumentParser, flag: str, *, env: str, help: str, **kwargs: Any
) -> None:
    """An option that falls back to `env`, then to its default; --help names the variable."""
    default = kwargs.pop("default", None)
    shown = f" (default: {default})" if default is not None else ""
    parser.add_argument(
        flag, default=os.environ.get(env, default), help=f"{help} [env {env}]{shown}", **kwargs
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
    return DatabaseSettings.build(
        dsn=args.dsn, data_dir=args.data_dir, embedding_dim=args.embedding_dim
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
