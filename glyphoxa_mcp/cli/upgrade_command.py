"""`upgrade-postgres`: move an embedded database to the newest PostgreSQL of the wheel."""

from __future__ import annotations

import argparse

import anyio

from glyphoxa_mcp.cli.options import add_database_options, database_settings
from glyphoxa_mcp.db.database import locate
from glyphoxa_mcp.db.embedded import NEWEST_POSTGRES, upgrade_embedded_server
from glyphoxa_mcp.errors import InvalidInputError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    upgrade = commands.add_parser(
        "upgrade-postgres",
        help=f"move the embedded database to PostgreSQL {NEWEST_POSTGRES} with pg_upgrade "
        "(the old directory is kept beside it); stop serve and other commands using it first",
    )
    add_database_options(upgrade)
    upgrade.set_defaults(run=run_upgrade_postgres)


async def run_upgrade_postgres(args: argparse.Namespace) -> int:
    settings = database_settings(args)
    if settings.dsn:
        raise InvalidInputError(
            "upgrade-postgres moves the embedded database (--data-dir); a --dsn server is "
            "upgraded by whoever runs it.",
            field="dsn",
        )
    upgraded = await anyio.to_thread.run_sync(upgrade_embedded_server, settings.data_dir)
    location = await locate(settings)  # and the vector extension to the library's version
    if upgraded is None:
        print(f"already on PostgreSQL {NEWEST_POSTGRES}: {location.description}")
        return 0
    before, after = upgraded
    print(f"upgraded PostgreSQL {before} -> {after}: {location.description}")
    print(
        f"the old data directory is kept as {settings.data_dir / 'postgres.old'}; delete it "
        "once `glyphoxa-mcp status` shows your campaigns"
    )
    return 0
