"""What the DM commands share: the campaign at the desk, references, attributes, output."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections.abc import AsyncIterator
from datetime import date, datetime
from typing import Any, Literal

from glyphoxa_mcp.cli.options import (
    add_database_options,
    app_settings,
    database_settings,
    env_option,
)
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk, only_campaign
from glyphoxa_mcp.domain.models import Visibility
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.entity_resolver import EntityResolver

CAMPAIGN_HELP = "campaign id; unset, the only campaign there is (with several, name one)"


def add_campaign_option(parser: argparse._ActionsContainer, help: str = CAMPAIGN_HELP) -> None:
    """--campaign, which a DM command may leave out when the database holds one campaign
    (`chosen_campaign`)."""
    env_option(parser, "--campaign", env="GLYPHOXA_CAMPAIGN", help=help)


def add_common(parser: argparse.ArgumentParser) -> None:
    add_campaign_option(parser)
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    add_database_options(parser)


def say_chosen(campaign: str) -> None:
    print(
        f"Campaign {campaign!r}, the only one in this database (--campaign names another).",
        file=sys.stderr,
    )


async def chosen_campaign(args: argparse.Namespace, db: Database) -> str:
    """--campaign; left out, the only campaign there is, said on stderr (with none or
    several, an error saying what to do). `args.campaign` holds it from then on."""
    if args.campaign is None:
        args.campaign = await only_campaign(db)
        say_chosen(args.campaign)
    campaign: str = args.campaign
    return campaign


def checked_session(session_id: str) -> str:
    """A --session value that can be a session's id."""
    if not re.match(KEY_PATTERN, session_id):
        raise InvalidInputError(f"--session {session_id!r}: use letters, digits, - _ . : only.")
    return session_id


def add_visibility(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secret", action="store_true", help="mark it secret")
    parser.add_argument(
        "--known-by",
        action="append",
        default=[],
        metavar="NPC",
        help="an NPC who knows it (repeat for more)",
    )


@contextlib.asynccontextmanager
async def campaign_desk(
    args: argparse.Namespace, *, create: bool = False
) -> AsyncIterator[CampaignDesk]:
    """The campaign at the DM's desk; with `create`, a campaign that does not exist yet is
    made. Without --campaign it is the only campaign there is (`chosen_campaign`), never
    one made. A command with the embedder options embeds what it writes with the embedder
    they configure (read only when it does)."""
    embedding = (lambda: app_settings(args).embedding) if "embedder" in args else None
    async with CampaignDesk.open(
        database_settings(args), args.campaign, create=create, embedding=embedding
    ) as desk:
        if args.campaign is None:
            args.campaign = desk.campaign_id
            say_chosen(desk.campaign_id)
        yield desk


def parse_attributes(pairs: list[str], flag: str = "--attr") -> dict[str, Any]:
    """k=v pairs; a value that reads as JSON (a number, true, a list) is taken as such."""
    attributes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInputError(f"{flag} {pair!r}: write it as key=value.", field=flag)
        try:
            attributes[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            attributes[key.strip()] = value
    return attributes


def visibility_of(args: argparse.Namespace, entities: EntityResolver) -> Visibility:
    known = tuple(entities.resolve(name, "--known-by").id for name in args.known_by)
    return Visibility(secret=args.secret, known_by=known)


ItemKind = Literal["entity", "relationship", "fact", "import", "line", "session"]


def parse_item(reference: str) -> tuple[ItemKind, str | int]:
    """'rel:12' -> ('relationship', 12), 'fact:7' -> ('fact', 7), 'line:3' -> ('line', 3),
    'session:s2' -> ('session', 's2'), anything else an entity."""
    prefix, sep, rest = reference.partition(":")
    if sep and prefix == "session":
        if not rest.strip():
            raise InvalidInputError(f"{reference!r}: write session:ID.")
        return "session", rest.strip()
    kinds: dict[str, Literal["relationship", "fact", "import", "line"]] = {
        "rel": "relationship",
        "relationship": "relationship",
        "fact": "fact",
        "import": "import",
        "line": "line",
    }
    if sep and prefix in kinds:
        if not rest.isdigit():
            raise InvalidInputError(f"{reference!r}: the id after {prefix}: is a number.")
        return kinds[prefix], int(rest)
    return "entity", reference


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, default=_json_default) if args.json else text)
