"""`migrate`, `status` and `backfill-embeddings`: bring the schema up to date, show what is
stored, embed the facts and relationships that have no vector yet."""

from __future__ import annotations

import argparse
import json

from glyphoxa_mcp.app import open_app
from glyphoxa_mcp.cli.options import (
    add_database_options,
    add_embedder_options,
    app_settings,
    database_settings,
    env_option,
)
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.db.database import Database, locate, migrate_dsn
from glyphoxa_mcp.desk.database_actions import (
    count_unembedded,
    database_status,
    embed_unembedded,
)
from glyphoxa_mcp.domain.listings import DatabaseStatus
from glyphoxa_mcp.domain.wording import counted


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

    backfill = commands.add_parser(
        "backfill-embeddings",
        help="embed the facts and relationships that have no vector yet (written before they "
        "were embedded, or while the embedder was down), so search_facts finds them by "
        "meaning; safe to stop and run again",
    )
    env_option(
        backfill,
        "--campaign",
        env="GLYPHOXA_CAMPAIGN",
        help="only this campaign (default: every campaign)",
    )
    add_database_options(backfill)
    add_embedder_options(backfill)
    backfill.set_defaults(run=run_backfill)


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


async def run_backfill(args: argparse.Namespace) -> int:
    async with open_app(app_settings(args), max_connections=2) as app:
        missing = await count_unembedded(app.db, args.campaign)
        print(
            f"{counted(missing.facts, 'fact')} and "
            f"{counted(missing.relationships, 'relationship')} without a vector"
        )
        if missing.facts or missing.relationships:
            done = await embed_unembedded(app.db, app.embedder, args.campaign)
            print(
                f"embedded {counted(done.facts, 'fact')} and "
                f"{counted(done.relationships, 'relationship')} with {app.embedder.model}"
            )
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
