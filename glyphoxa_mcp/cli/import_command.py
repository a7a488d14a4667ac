"""`import foundry|roll20|csv FILE [--accept]`: entities from a virtual tabletop."""

from __future__ import annotations

import argparse
from contextlib import redirect_stdout
from dataclasses import asdict
from io import StringIO
from pathlib import Path

from glyphoxa_mcp.campaign.vtt.csv_import import parse_csv
from glyphoxa_mcp.campaign.vtt.foundry import parse_foundry
from glyphoxa_mcp.campaign.vtt.roll20 import parse_roll20
from glyphoxa_mcp.cli.campaign_commands import read_text
from glyphoxa_mcp.cli.dm_support import add_common, chosen_campaign, emit
from glyphoxa_mcp.cli.options import database_settings
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.campaign_actions import import_entities
from glyphoxa_mcp.domain.reports import ImportReport

PARSERS = {"foundry": parse_foundry, "roll20": parse_roll20, "csv": parse_csv}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "import",
        help="import entities from Foundry VTT, Roll20 or CSV (held for review unless --accept)",
    )
    parser.add_argument("format", choices=sorted(PARSERS))
    parser.add_argument("file", type=Path)
    parser.add_argument(
        "--accept", action="store_true", help="write them now instead of holding them for review"
    )
    add_common(parser)
    parser.set_defaults(run=run_import)


async def run_import(args: argparse.Namespace) -> int:
    result = PARSERS[args.format](read_text(args.file), str(args.file))
    async with await Database.open(database_settings(args), max_size=2) as db:
        campaign = await chosen_campaign(args, db)
        report = await import_entities(db, campaign, args.format, result, accept=args.accept)
    emit(
        args,
        {
            "campaign": report.campaign_id,
            "accepted": report.accepted,
            "entities": [asdict(e) for e in report.entities],
            "notes": list(report.notes),
        },
        describe(report),
    )
    return 0


def describe(report: ImportReport) -> str:

    changed = [e for e in report.entities if e.action != "unchanged"]
    out = StringIO()
    with redirect_stdout(out):
        if changed:
            print_table(
                ["review id" if not report.accepted else "", "change", "type", "name"],
                [
                    [f"import:{e.pending_id}" if e.pending_id else "", e.action, e.type, e.name]
                    for e in changed
                ],
            )
            print()
    unchanged = len(report.entities) - len(changed)
    if report.accepted:
        summary = f"Imported {len(changed)} new or changed entities; {unchanged} unchanged."
    else:
        summary = (
            f"{len(changed)} new or changed entities wait for review "
            f"(review confirm import:ID, or import again with --accept); "
            f"{unchanged} unchanged."
        )
    return out.getvalue() + "\n".join([summary, *report.notes])
