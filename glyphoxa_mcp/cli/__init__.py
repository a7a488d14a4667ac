"""The `glyphoxa-mcp` command."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, cast

import anyio

from glyphoxa_mcp import __version__
from glyphoxa_mcp.cli import (
    bench_command,
    campaign_commands,
    claude_config_command,
    correct_command,
    db_commands,
    demo_command,
    entity_commands,
    eval_command,
    import_command,
    knowledge_commands,
    lore_commands,
    record_command,
    schemas_command,
    serve_command,
    session_commands,
    token_commands,
    transcript_commands,
    upgrade_command,
    vocabulary_command,
    web_command,
)
from glyphoxa_mcp.cli.options import apply_settings
from glyphoxa_mcp.cli.settings import LOG_LEVELS, GlyphoxaSettings, read_settings
from glyphoxa_mcp.cli.signals import Terminated, terminate_like_interrupt
from glyphoxa_mcp.errors import ConfigurationError, GlyphoxaError, InvalidInputError, NotFoundError

# Exit codes: 1 for failures, 2 for bad input or configuration (argparse uses 2 as well).
EXIT_FAILURE = 1
EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """Every command's parser takes --log-level, so it may come before or after the command
    (a Claude Desktop `args` list often puts it last). Unset, it stays out of the namespace
    and a value given earlier on the line stands."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument(
            "--log-level",
            default=argparse.SUPPRESS,
            choices=LOG_LEVELS,
            type=str.upper,
            help="log detail, written to stderr [env GLYPHOXA_LOG_LEVEL] (default: WARNING)",
        )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="glyphoxa-mcp",
        description="Long-term memory for voice NPCs, served over MCP from one PostgreSQL.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # Each command's module takes the plain parser type; every parser made is a Parser.
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(title="commands", metavar="COMMAND", required=True),
    )
    db_commands.register(commands)
    upgrade_command.register(commands)
    serve_command.register(commands)
    schemas_command.register(commands)
    demo_command.register(commands)
    claude_config_command.register(commands)
    campaign_commands.register(commands)
    entity_commands.register(commands)
    knowledge_commands.register(commands)
    import_command.register(commands)
    lore_commands.register(commands)
    session_commands.register(commands)
    transcript_commands.register(commands)
    record_command.register(commands)
    token_commands.register(commands)
    vocabulary_command.register(commands)
    correct_command.register(commands)
    eval_command.register(commands)
    bench_command.register(commands)
    web_command.register(commands)
    return parser


def log_level_from(settings: GlyphoxaSettings) -> str:
    """GLYPHOXA_LOG_LEVEL, for a command line without --log-level."""
    problem = settings.problems.get("GLYPHOXA_LOG_LEVEL")
    if problem is not None:
        raise SystemExit(f"glyphoxa-mcp: error: {problem.variable}: {problem.message}")
    return settings.general.log_level


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found


def _run(args: argparse.Namespace) -> int:
    """The command, with an error raised inside a task group unwrapped when it is the only
    one, so it is reported by its own message."""
    try:
        code: int = anyio.run(args.run, args)
        return code
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from group
        raise


def main(argv: Sequence[str] | None = None) -> int:
    # The environment is read once, here, as the command starts (never at import).
    settings = read_settings()
    parser = build_parser()
    args = parser.parse_args(argv)
    if "log_level" not in args:
        args.log_level = log_level_from(settings)
    logging.basicConfig(
        level=args.log_level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        apply_settings(args, settings)
        with terminate_like_interrupt():
            return _run(args)
    except (ConfigurationError, InvalidInputError, NotFoundError) as exc:
        print(f"glyphoxa-mcp: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except GlyphoxaError as exc:
        print(f"glyphoxa-mcp: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except Terminated:
        return 143
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (head, less) went away: stop quietly, and keep Python's exit-time flush
        # of stdout from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        # A fault no error above names: one line, and the traceback only when asked for.
        logging.getLogger(__name__).debug("internal error", exc_info=True)
        print(
            f"glyphoxa-mcp: error: internal error ({type(exc).__name__}); "
            "rerun with --log-level DEBUG for the details",
            file=sys.stderr,
        )
        return EXIT_FAILURE
