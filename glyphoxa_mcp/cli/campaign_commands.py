"""`campaign load FILE`, `config`, `sample`; what-if branches (`campaign fork C NEW`,
`campaign branches C`) and `campaign delete C` (desk/campaign_actions.py); `export` and
`import` (cli/archive_commands.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from glyphoxa_mcp.bounded_input import MAX_FILE_CHARS, check_length
from glyphoxa_mcp.campaign.sample import sample_campaign
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.cli.archive_commands import register_archive
from glyphoxa_mcp.cli.dm_support import add_common, campaign_desk, emit
from glyphoxa_mcp.cli.options import (
    add_database_options,
    add_embedder_options,
    app_settings,
    database_settings,
    env_option,
)
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.campaign_actions import (
    campaign_lineage,
    campaign_settings,
    campaign_size,
    configure_knowledge,
    delete_campaign,
    fork_campaign,
    load_campaign_file,
    set_review_threshold,
)
from glyphoxa_mcp.domain.knowledge import (
    DEFAULT_NEWS_HOPS,
    MAX_NEWS_HOPS,
    NEWS_TYPES,
    Knowledge,
)
from glyphoxa_mcp.domain.listings import Branch
from glyphoxa_mcp.domain.models import Campaign
from glyphoxa_mcp.domain.reports import BranchPolicy, CampaignSize, LoadKind, LoadReport
from glyphoxa_mcp.domain.wording import comma_separated, counted
from glyphoxa_mcp.errors import InvalidInputError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    campaign = commands.add_parser(
        "campaign",
        help="load campaign files; fork, list and delete what-if branches; export and import",
    )
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
    config.add_argument(
        "--knowledge",
        choices=[k.value for k in Knowledge],
        help="'witnessed': an NPC reads only the lines of scenes it was present in, and hears "
        "of others through the people it is tied to; 'shared': every NPC reads every line "
        "(campaigns made before scenes existed); applied at once",
    )
    config.add_argument(
        "--news-hops",
        type=int,
        metavar="N",
        help=f"how many relationships word of a scene travels from those present (0-"
        f"{MAX_NEWS_HOPS}, default {DEFAULT_NEWS_HOPS})",
    )
    config.add_argument(
        "--news-types",
        metavar="TYPES",
        help="your own relationship types that carry news, comma-separated (besides "
        f"{', '.join(NEWS_TYPES)}); an empty string clears them",
    )
    add_common(config)
    config.set_defaults(run=run_config)
    sample = actions.add_parser(
        "sample", help="print the sample campaign file (a commented example of the format)"
    )
    sample.set_defaults(run=run_sample)
    register_branches(actions)
    register_archive(actions)


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
    news_types = None if args.news_types is None else comma_separated(args.news_types)
    async with campaign_desk(args) as desk:
        campaign = await campaign_settings(desk)
        if args.review_threshold is not None:
            campaign = await set_review_threshold(desk, args.review_threshold)
        if (args.knowledge, args.news_hops, news_types) != (None, None, None):
            campaign = await configure_knowledge(
                desk,
                knowledge=None if args.knowledge is None else Knowledge(args.knowledge),
                news_hops=args.news_hops,
                news_types=news_types,
            )
    emit(args, campaign.model_dump(mode="json"), settings_text(campaign))
    return 0


def settings_text(campaign: Campaign) -> str:
    """The campaign's settings, as a DM reads them."""
    lines = [
        f"Campaign {campaign.id!r} ({campaign.name}): review threshold "
        f"{campaign.review_threshold:g}"
    ]
    if campaign.knowledge is Knowledge.SHARED:
        lines.append("Knowledge: shared (every NPC reads every line the DM did not hide).")
        return "\n".join(lines)
    carriers = ", ".join((*NEWS_TYPES, *campaign.news_types))
    hops = campaign.news_hops
    travel = (
        "word of a scene never travels"
        if hops == 0
        else f"word of a scene travels {hops} relationship{'s' if hops > 1 else ''} from those "
        f"present, over {carriers}"
    )
    lines.append(f"Knowledge: witnessed (an NPC reads the scenes it was present in; {travel}).")
    return "\n".join(lines)


async def run_load(args: argparse.Namespace) -> int:
    file = parse_campaign_file(read_text(args.file), str(args.file))
    async with await Database.open(database_settings(args), max_size=2) as db:
        embedding = None if args.dry_run else app_settings(args).embedding
        report = await load_campaign_file(
            db, file, args.campaign, dry_run=args.dry_run, embedding=embedding
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
    kinds: tuple[tuple[LoadKind, str], ...] = (
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


def register_branches(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fork = actions.add_parser(
        "fork",
        help="copy a campaign's memory into a new campaign (a what-if branch), everything or "
        "as it stood after a session; in one transaction",
    )
    fork.add_argument("campaign", help="the campaign to copy")
    fork.add_argument("new", help="the new campaign's id")
    fork.add_argument(
        "--at-session",
        metavar="SESSION",
        help="the memory as it stood after this session: later sessions and what was learned "
        "in them left out, retcons made since undone",
    )
    fork.add_argument("--name", help="the new campaign's name (default: the parent's, and NEW)")
    fork.add_argument("--json", action="store_true", help="print JSON for scripts")
    add_database_options(fork)
    fork.set_defaults(run=run_fork)

    branches = actions.add_parser(
        "branches", help="the lineage of a campaign: what it was forked from, and its branches"
    )
    branches.add_argument("campaign")
    branches.add_argument("--json", action="store_true", help="print JSON for scripts")
    add_database_options(branches)
    branches.set_defaults(run=run_branches)

    delete = actions.add_parser(
        "delete",
        help="delete a campaign and everything stored for it (asks first; --yes off a terminal)",
    )
    delete.add_argument("campaign")
    delete.add_argument(
        "--yes", action="store_true", help="do not ask (needed when not run from a terminal)"
    )
    with_branches = delete.add_mutually_exclusive_group()
    with_branches.add_argument(
        "--with-branches", action="store_true", help="delete its branches (and theirs) too"
    )
    with_branches.add_argument(
        "--keep-branches",
        action="store_true",
        help="keep its branches as campaigns of their own",
    )
    delete.add_argument("--json", action="store_true", help="print JSON for scripts")
    add_database_options(delete)
    delete.set_defaults(run=run_delete)


async def run_fork(args: argparse.Namespace) -> int:
    async with await Database.open(database_settings(args), max_size=2) as db:
        fork = await fork_campaign(
            db, args.campaign, args.new, at_session=args.at_session, name=args.name
        )
    rows = fork.rows
    point = (
        f" as it stood after session {fork.at_session!r}"
        + (f" (left out: {', '.join(fork.sessions_left_out)})" if fork.sessions_left_out else "")
        if fork.at_session
        else ""
    )
    emit(
        args,
        fork.model_dump(mode="json"),
        f"Forked campaign {fork.parent_id!r} into {fork.campaign_id!r}{point}: "
        f"{counted(rows['sessions'], 'session')}, {counted(rows['session_entries'], 'line')}, "
        f"{counted(rows['chunks'], 'passage')}, {counted(rows['entities'], 'entity')}, "
        f"{counted(rows['relationships'], 'relationship')}, {counted(rows['facts'], 'fact')}."
        "\nAccess tokens are not copied: glyphoxa-mcp token create "
        f"--campaign {fork.campaign_id} ...",
    )
    return 0


async def run_branches(args: argparse.Namespace) -> int:
    async with await Database.open(database_settings(args), max_size=2) as db:
        tree = await campaign_lineage(db, args.campaign)
    if args.json:
        emit(args, tree.model_dump(mode="json"), "")
        return 0
    for line in tree_lines(tree, args.campaign):
        print(line)
    return 0


def tree_lines(tree: Branch, current: str) -> list[str]:
    """The lineage drawn as a tree, one campaign a line, `current` marked."""

    def label(branch: Branch) -> str:
        text = f"{branch.id} ({branch.name})"
        if branch.forked_at is not None:
            point = (
                f"after session {branch.forked_at_session}, " if branch.forked_at_session else ""
            )
            parent = "" if branch.forked_from else "from a deleted campaign, "
            text += f"  forked {parent}{point}{branch.forked_at:%Y-%m-%d %H:%M}"
        return text + ("  <- this one" if branch.id == current else "")

    lines = [label(tree)]

    def below(branch: Branch, indent: str) -> None:
        for number, child in enumerate(branch.children):
            last = number == len(branch.children) - 1
            lines.append(f"{indent}{'└── ' if last else '├── '}{label(child)}")
            below(child, indent + ("    " if last else "│   "))

    below(tree, "")
    return lines


async def run_delete(args: argparse.Namespace) -> int:
    policy: BranchPolicy = (
        "delete" if args.with_branches else "keep" if args.keep_branches else "refuse"
    )
    async with await Database.open(database_settings(args), max_size=2) as db:
        if not args.yes:
            size = await campaign_size(db, args.campaign)
            # With branches and no choice for them, the deletion refuses before anything is
            # asked, naming the choices.
            if not (size.branches and policy == "refuse") and not confirmed(size, policy):
                print("Nothing was deleted.", file=sys.stderr)
                return 1
        deleted = await delete_campaign(db, args.campaign, policy)
    also = ""
    if deleted.branches_deleted:
        also += f" and its branches {', '.join(deleted.branches_deleted)}"
    if deleted.branches_kept:
        also += f"; its branches {', '.join(deleted.branches_kept)} are campaigns of their own"
    emit(
        args,
        deleted.model_dump(mode="json"),
        f"Deleted campaign {deleted.campaign_id!r}{also}: {counted(deleted.sessions, 'session')}, "
        f"{counted(deleted.lines, 'line')}, {counted(deleted.entities, 'entity')}.",
    )
    return 0


def confirmed(size: CampaignSize, policy: BranchPolicy) -> bool:
    """Ask on the terminal; off a terminal, --yes is the answer."""
    if not sys.stdin.isatty():
        raise InvalidInputError(
            "campaign delete asks before deleting, and no terminal is there to answer: "
            "pass --yes to delete without asking.",
            field="--yes",
        )
    branches = (
        f", with its branches {', '.join(size.branches)}"
        if size.branches and policy == "delete"
        else ""
    )
    print(
        f"Delete campaign {size.campaign_id!r} ({counted(size.sessions, 'session')}, "
        f"{counted(size.lines, 'line')}, {counted(size.entities, 'entity')}{branches}) and "
        "everything stored for it? This cannot be undone.\nType the campaign's id to delete it: ",
        end="",
        file=sys.stderr,
        flush=True,
    )
    return sys.stdin.readline().strip() == size.campaign_id
