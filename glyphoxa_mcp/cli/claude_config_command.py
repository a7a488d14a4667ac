"""`claude-config`: the claude_desktop_config.json entry for this installation."""

from __future__ import annotations

import argparse
import json
import sys

from glyphoxa_mcp.cli.options import (
    add_database_options,
    add_scope_options,
    database_settings,
    env_option,
)
from glyphoxa_mcp.errors import ConfigurationError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "claude-config",
        help="print a Claude Desktop mcpServers entry for this installation",
        description="Prints JSON to paste into claude_desktop_config.json. It runs this "
        "Python with absolute paths and underscore tool names (Claude Desktop rejects dots).",
    )
    add_scope_options(parser, default_campaign="demo")
    env_option(
        parser,
        "--name",
        env="GLYPHOXA_SERVER_NAME",
        help="the server's name in Claude",
    )
    add_database_options(parser)
    parser.set_defaults(run=run_claude_config)


# Where `uvx` and `pipx run` put the environments they make for one run; those caches are
# pruned, and Claude Desktop would then start an interpreter that is gone.
_TEMPORARY_ENVIRONMENTS = (
    ("/uv/archive-v", "uvx"),
    ("/uv/builds-v", "uvx"),
    ("/pipx/.cache/", "pipx run"),
)


def temporary_runner(prefix: str) -> str | None:
    """The tool that made the temporary environment at `prefix`, or None if it is kept."""
    normalised = prefix.replace("\\", "/")
    for marker, runner in _TEMPORARY_ENVIRONMENTS:
        if marker in normalised:
            return runner
    return None


def desktop_entry(args: argparse.Namespace) -> dict[str, object]:
    runner = temporary_runner(sys.prefix)
    if runner is not None:
        raise ConfigurationError(
            f"This glyphoxa-mcp runs from a temporary {runner} environment that will be "
            "deleted, so Claude Desktop could not start it later. Install it first "
            "(`uv tool install glyphoxa-mcp` or `pipx install glyphoxa-mcp`), then run "
            "`glyphoxa-mcp claude-config` from the installed tool."
        )
    settings = database_settings(args)
    serve = [
        "-m",
        "glyphoxa_mcp",
        "serve",
        "--campaign",
        args.campaign,
        "--tier",
        args.tier,
        "--tool-names",
        "underscore",
    ]
    if args.npc:
        serve += ["--npc", args.npc]
    env = {}
    if settings.embedding_dim is not None:
        env["GLYPHOXA_EMBEDDING_DIM"] = str(settings.embedding_dim)
    if settings.dsn:
        env["GLYPHOXA_DSN"] = settings.dsn
    else:
        env["GLYPHOXA_DATA_DIR"] = str(settings.data_dir.resolve())
    return {"mcpServers": {args.name: {"command": sys.executable, "args": serve, "env": env}}}


async def run_claude_config(args: argparse.Namespace) -> int:
    print(json.dumps(desktop_entry(args), indent=2))
    return 0
