"""`migrate` and `status`: bring the schema up to date and show what is stored."""

from __future__ import annotations

import argparse
import json

from glyphoxa_mcp.cli.options import add_database_options, database_settings
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.db.database import Database, locate, migrate_dsn
from glyphoxa_mcp.storage.status import DatabaseStatus, database_status


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    migrate = commands.add_parser("migrate", help="apply pending schema migrations")
    add_database_options(migrate)
    migrate.set_defaults(run=run_migrate)

    status = commands.add_parser(
        "status", help="where the database is, its schema version and what it holds"
    )
    add_database_options(status)
    status.add_argument("--json", action="store_true", help="print JSON for scripts")
    status.set_defaults(run=run_status)


async def run_migrate(args: argparse.Namespace) -> int:
    settings = database_settings(args)
    location = await locate(settings)
    report = await migrate_dsn(location.dsn, settings.embedding_dim)
    if report.applied:
        for migration in report.applied:
            print(f"applied {migration.version:03d}_{migration.name}")
    else:
        print("schema is up to date")
    print(f"schema version {report.schema_version} at {location.description}")
    return 0


async def run_status(args: argparse.Namespace) -> int:
    async with await Database.open(database_settings(args), max_size=2) as db:
        status = await database_status(db)
    if args.json:
        print(json.dumps(status.model_dump(mode="json"), indent=2))
    else:
        print_status(status)
    return 0


def print_status(status: DatabaseStatus) -> None:
    print(f"database:        {status.location}")
    print(
        f"server:          PostgreSQL {status.server_version}, pgvector {status.pgvector_version}"
    )
    print(f"schema version:  {status.schema_version}")
    print(f"embedding dim:   {status.embedding_dim}")
    if not status.campaigns:
        print("campaigns:       none yet")
        return
    print()
    print_table(
        [
            "campaign",
            "sessions",
            "L1 entries",
            "L2 chunks",
            "L3 entities",
            "relationships",
            "facts",
        ],
        [
            [c.id, c.sessions, c.entries, c.chunks, c.entities, c.relationships, c.facts]
            for c in status.campaigns
        ],
    )
