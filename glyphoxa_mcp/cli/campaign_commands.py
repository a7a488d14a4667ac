"""`campaign load FILE`: put a campaign file into the knowledge graph."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from glyphoxa_mcp.bounded_input import MAX_FILE_CHARS, check_length
from glyphoxa_mcp.campaign.loader import Kind, LoadReport, load_campaign
from glyphoxa_mcp.campaign.sample import sample_campaign
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.cli.dm_support import add_common, campaign_memory, emit
from glyphoxa_mcp.cli.options import (
    add_database_options,
    add_embedder_options,
    app_settings,
    database_settings,
    env_option,
)
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.fact_vectors import write_embedder
from glyphoxa_mcp.storage.campaigns import Campaigns


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    campaign = commands.add_parser("campaign", help="load campaign files")
    actions = campaign.add_subparsers(title="actions", metavar="ACTION", required=True)
    load = actions.add_parser(
        "load",
        help="validate a campaign file and load it (all or nothing; loading again is harmless)",
    )
    load.add_argument("file", type=Path, help="YAML (or JSON) campaign file")
    load.add_argument(
        "--dry-run", action="store_true", help="show what would change; write nothing"
    )
    load.add_argument("--json", action="store_true", help="print JSON for scripts")
    env_option(
        load,
        "--campaign",
        env="GLYPHOXA_CAMPAIGN",
        help="campaign id, when the file has no 'campaign:' header",
    )
    add_database_options(load)
    add_embedder_options(load)
    load.set_defaults(run=run_load)
    config = actions.add_parser(
        "config", help="show a campaign's settings, or change them with the options given"
    )
    config.add_argument(
        "--review-threshold",
        type=float,
        metavar="CONFIDENCE",
        help="below this confidence (0-1), unconfirmed knowledge is a rumour the DM reviews "
        "(default 0.7); running servers use it once restarted",
    )
    add_common(config)
    config.set_defaults(run=run_config)
    sample = actions.add_parser(
        "sample", help="print the sample campaign file (a commented example of the format)"
    )
    sample.set_defaults(run=run_sample)


async def run_sample(args: argparse.Namespace) -> int:
    print(sample_campaign(), end="")
    return 0


def read_text(path: Path, max_chars: int = MAX_FILE_CHARS) -> str:
    """The file's text; past `max_chars` it is refused, having read one character more."""
    try:
        with path.open(encoding="utf-8") as file:
            text = file.read(max_chars + 1)
    except FileNotFoundError:
        raise InvalidInputError(f"{path}: no such file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{path}: cannot be read ({exc}).") from None
    check_length(text, str(path), max_chars)
    return text


async def run_config(args: argparse.Namespace) -> int:
    async with campaign_memory(args) as (db, memory):
        if args.review_threshold is not None:
            campaign = await Campaigns(db).set_review_threshold(
                memory.campaign_id, args.review_threshold
            )
        else:
            campaign = await memory.campaign()
    emit(
        args,
        campaign.model_dump(mode="json"),
        f"Campaign {campaign.id!r} ({campaign.name}): review threshold "
        f"{campaign.review_threshold:g}",
    )
    return 0


async def run_load(args: argparse.Namespace) -> int:
    file = parse_campaign_file(read_text(args.file), str(args.file))
    async with await Database.open(database_settings(args), max_size=2) as db:
        embedder = None if args.dry_run else await write_embedder(db, app_settings(args).embedding)
        report = await load_campaign(
            db, file, args.campaign, dry_run=args.dry_run, embedder=embedder
        )
    if args.json:
        print(json.dumps(report_json(report), indent=2))
    else:
        print_report(report)
    return 0


def report_json(report: LoadReport) -> dict[str, object]:
    return {
        "campaign": report.campaign_id,
        "dry_run": report.dry_run,
        "counts": {
            kind: {
                action: report.count(kind, action) for action in ("created", "updated", "unchanged")
            }
            for kind in ("entity", "relationship", "fact")
        },
        "changes": [{"kind": c.kind, "action": c.action, "item": c.label} for c in report.changes],
    }


def print_report(report: LoadReport) -> None:
    verb = "would load" if report.dry_run else "loaded"
    parts = []
    kinds: tuple[tuple[Kind, str], ...] = (
        ("entity", "entities"),
        ("relationship", "relationships"),
        ("fact", "facts"),
    )
    for kind, plural in kinds:
        created, updated = report.count(kind, "created"), report.count(kind, "updated")
        parts.append(f"{report.count(kind)} {plural} ({created} new, {updated} changed)")
    print(f"Campaign {report.campaign_id!r}: {verb} " + ", ".join(parts) + ".")
    changed = [c for c in report.changes if c.action != "unchanged"]
    if changed:
        print()
        print_table(["change", "kind", "item"], [[c.action, c.kind, c.label] for c in changed])
    else:
        print("Nothing changed.")
    if report.dry_run:
        print("\nDry run: nothing was written.")
