"""`demo`: load the sample campaign and show every tier, tool and the hot context."""

from __future__ import annotations

import argparse

from glyphoxa_mcp.app import open_app
from glyphoxa_mcp.cli.options import add_database_options, add_embedder_options, app_settings


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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

    async with open_app(app_settings(args)) as app:
        print(f"Memory database: {app.db.location.description}")
        memory = await demo.prepare(app.db, app.embedder, print)
        await demo.tour(memory, app.embedder, print)
    print("\nServe it yourself: glyphoxa-mcp serve --campaign demo   (see README.md)")
    return 0
