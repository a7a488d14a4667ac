"""What the DM commands share: the campaign's memory, references, attributes, output."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
from collections.abc import AsyncIterator
from datetime import date, datetime
from typing import Any, Literal

from glyphoxa_mcp.cli.options import add_database_options, database_settings, env_option
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import Visibility
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.recall.entity_resolver import EntityResolver
from glyphoxa_mcp.recall.names import match_names
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory

MAX_ENTITIES = 100_000


def add_common(parser: argparse.ArgumentParser) -> None:
    env_option(parser, "--campaign", env="GLYPHOXA_CAMPAIGN", help="campaign id", default="default")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    add_database_options(parser)


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
async def campaign_memory(
    args: argparse.Namespace, *, create: bool = False
) -> AsyncIterator[tuple[Database, CampaignMemory]]:
    """The campaign's memory; with `create`, a campaign that does not exist yet is made."""
    async with await Database.open(database_settings(args), max_size=2) as db:
        if create:
            await Campaigns(db).ensure(args.campaign)
        else:
            await Campaigns(db).get(args.campaign)
        yield db, CampaignMemory(db, args.campaign)


async def resolver(memory: CampaignMemory) -> EntityResolver:
    return EntityResolver(await memory.graph.find_entities(limit=MAX_ENTITIES))


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


async def check_npc(memory: CampaignMemory, npc_id: str) -> None:
    try:
        await memory.graph.get_entity(npc_id)
    except NotFoundError:
        near = match_names(npc_id, await memory.queries.entity_names(), limit=3)
        hint = f" Did you mean {', '.join(m.entity.id for m in near)}?" if near else ""
        raise NotFoundError(
            f"No entity {npc_id!r} in campaign {memory.campaign_id!r} for --npc.{hint}"
        ) from None
