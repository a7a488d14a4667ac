"""`demo`: load the sample campaign and show every tier, tool and the hot context."""

from __future__ import annotations

import argparse

from glyphoxa_mcp.cli.options import add_database_options, database_settings
from glyphoxa_mcp.cli.serve_command import add_embedder_options, embedding_settings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.providers.embeddings import make_embedder


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "demo",
        help="load a sample campaign and query it through a real MCP client",
        description="Loads the bundled sample campaign and two sessions into the database "
        "(again is harmless), then lists each tier's tools, calls each tool once, shows a "
        "secret kept from one NPC, and prints one NPC's hot context.",
    )
    add_database_options(parser)
    add_embedder_options(parser)
    parser.set_defaults(run=run_demo)


async def run_demo(args: argparse.Namespace) -> int:
    from glyphoxa_mcp import demo  # imports the MCP SDK; see run_serve

    embedder_settings = embedding_settings(args)
    async with await Database.open(database_settings(args)) as db:
        print(f"Memory database: {db.location.description}")
        embedder = make_embedder(embedder_settings, db.embedding_dim)
        memory = await demo.prepare(db, embedder, print)
        await demo.tour(memory, embedder, print)
    print("\nServe it yourself: glyphoxa-mcp serve --campaign demo   (see README.md)")
    return 0
