"""`token create|list|revoke`: bearer tokens for the HTTP server, one viewer each."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.access import Grant
from glyphoxa_mcp.cli.dm_support import emit
from glyphoxa_mcp.cli.options import add_database_options, database_settings, env_option
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.token_actions import create_token, list_tokens, revoke_token
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.viewer import Viewer, ViewerKind
from glyphoxa_mcp.errors import InvalidInputError

MAX_DAYS = 3650


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = commands.add_parser(
        "token",
        help="bearer tokens for `serve --transport http`",
        description="Each token lets one viewer (an NPC or the DM) of one campaign "
        "read over HTTP, up to a tier, or lets a recorder (a voice bridge) write that "
        "campaign's sessions at /c/{campaign}/record/mcp. The database keeps only a hash of it.",
    )
    actions = token.add_subparsers(title="actions", metavar="ACTION", required=True)

    create = actions.add_parser(
        "create", help="make a token and print it once (it cannot be shown again)"
    )
    env_option(create, "--campaign", env="GLYPHOXA_CAMPAIGN", help="campaign id", default=None)
    viewer = create.add_mutually_exclusive_group(required=True)
    viewer.add_argument("--npc", metavar="ID", help="the NPC whose view the token reads")
    viewer.add_argument("--dm", action="store_true", help="the DM's view: every secret")
    viewer.add_argument(
        "--recorder",
        action="store_true",
        help="a recorder: appends transcripts and session facts, reads nothing",
    )
    create.add_argument(
        "--tier",
        type=str.upper,
        choices=[t.value for t in Tier],
        help="highest tier (default: all)",
    )
    create.add_argument("--label", help="what the token is for, shown by `token list`")
    create.add_argument("--expires", type=int, metavar="DAYS", help="days until it expires")
    create.add_argument("--json", action="store_true", help='print {"id": ..., "token": ...}')
    add_database_options(create)
    create.set_defaults(run=run_create)

    listing = actions.add_parser("list", help="the tokens, without their secrets")
    env_option(listing, "--campaign", env="GLYPHOXA_CAMPAIGN", help="only this campaign")
    listing.add_argument("--json", action="store_true", help="print JSON for scripts")
    add_database_options(listing)
    listing.set_defaults(run=run_list)

    revoke = actions.add_parser(
        "revoke", help="stop a token from working (at the next request, open sessions too)"
    )
    revoke.add_argument("id", help="the token's id, as `token list` shows it")
    revoke.add_argument("--json", action="store_true", help="print JSON for scripts")
    add_database_options(revoke)
    revoke.set_defaults(run=run_revoke)


def _expiry(days: int | None) -> datetime | None:
    if days is None:
        return None
    if not 1 <= days <= MAX_DAYS:
        raise InvalidInputError(f"--expires: give a number of days from 1 to {MAX_DAYS}.")
    return datetime.now(UTC) + timedelta(days=days)


def _viewer(args: argparse.Namespace) -> Viewer:
    if not args.campaign:
        raise InvalidInputError("--campaign: name the campaign the token is for.")
    if args.npc:
        return Viewer.npc(args.campaign, args.npc)
    if args.recorder:
        if args.tier:
            raise InvalidInputError("--tier: a recorder token has no tier; leave it out.")
        return Viewer.recorder(args.campaign)
    return Viewer.dm(args.campaign)


async def run_create(args: argparse.Namespace) -> int:
    expires_at = _expiry(args.expires)
    label = args.label.strip() if args.label else None
    if label is not None and len(label) > 200:
        raise InvalidInputError("--label: at most 200 characters.")
    viewer = _viewer(args)
    async with await Database.open(database_settings(args), max_size=2) as db:
        grant, token = await create_token(
            db, viewer, Tier(args.tier) if args.tier else None, label, expires_at
        )
    if args.json:
        print(json.dumps({"id": grant.id, "token": token.token}))
        return 0
    print(token.token)
    reach = (
        f"at /c/{viewer.campaign}/record/mcp"
        if viewer.kind is ViewerKind.RECORDER
        else f"tiers up to {(grant.max_tier or Tier.DEEP).value}"
    )
    print(
        f"Token {grant.id} for {viewer.describe()}, {reach}"
        + (f", expires {grant.expires_at:%Y-%m-%d}" if grant.expires_at else "")
        + ". It is shown only now: keep it where your client reads it.",
        file=sys.stderr,
    )
    return 0


def _row(grant: Grant) -> dict[str, object]:
    return {
        "id": grant.id,
        "campaign": grant.viewer.campaign,
        "viewer": grant.viewer.kind.value,
        "npc": grant.viewer.npc_id,
        "max_tier": grant.max_tier.value if grant.max_tier else None,
        "label": grant.label,
        "created_at": grant.created_at,
        "expires_at": grant.expires_at,
        "last_used_at": grant.last_used_at,
        "revoked_at": grant.revoked_at,
        "state": _state(grant),
    }


def _state(grant: Grant) -> str:
    refusal = grant.refusal(datetime.now(UTC))
    if refusal is None:
        return "active"
    return "revoked" if grant.revoked_at is not None else "expired"


def _day(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M}" if moment else "-"


async def run_list(args: argparse.Namespace) -> int:
    async with await Database.open(database_settings(args), max_size=2) as db:
        grants = await list_tokens(db, args.campaign or None)
    rows = [_row(grant) for grant in grants]
    if args.json:
        emit(args, rows, "")
        return 0
    if not grants:
        print("No tokens. `glyphoxa-mcp token create --campaign C --npc ID` makes one.")
        return 0
    print_table(
        ["id", "campaign", "viewer", "max tier", "state", "label", "created", "expires", "used"],
        [
            [
                g.id,
                g.viewer.campaign,
                g.viewer.npc_id or g.viewer.kind.value,
                g.max_tier.value if g.max_tier else "all",
                _state(g),
                g.label or "",
                _day(g.created_at),
                _day(g.expires_at),
                _day(g.last_used_at),
            ]
            for g in grants
        ],
    )
    return 0


async def run_revoke(args: argparse.Namespace) -> int:
    async with await Database.open(database_settings(args), max_size=2) as db:
        grant = await revoke_token(db, args.id.strip())
    emit(args, _row(grant), f"Token {grant.id} ({grant.viewer.describe()}) is revoked.")
    return 0
