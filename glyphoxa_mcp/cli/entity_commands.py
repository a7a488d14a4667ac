"""`entity add|list|show|edit|remove` and `relate`: the DM's hands on the graph."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from glyphoxa_mcp.cli.dm_support import (
    add_common,
    add_visibility,
    campaign_desk,
    emit,
    parse_attributes,
    visibility_of,
)
from glyphoxa_mcp.cli.options import add_embedder_options
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.desk.entity_actions import (
    add_entity,
    edit_entity,
    entity_details,
    list_entities,
    relate,
    remove_entity,
)
from glyphoxa_mcp.desk.fact_actions import rumour_rule
from glyphoxa_mcp.desk.name_actions import entity_resolver
from glyphoxa_mcp.domain.models import Entity, NewEntity, Provenance, Visibility, build
from glyphoxa_mcp.domain.rumours import RumourRule
from glyphoxa_mcp.domain.vocabulary import EntityType, checked_relationship_type
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.relationship_sentences import relationship_sentence, seen_from

TYPES = ", ".join(t.value for t in EntityType)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    entity = commands.add_parser("entity", help="add, list, show, edit or remove entities")
    actions = entity.add_subparsers(title="actions", metavar="ACTION", required=True)

    add = actions.add_parser("add", help="add an entity")
    add.add_argument("name")
    add.add_argument("type", help=TYPES)
    add.add_argument("--id", help="its id (default: derived from the name)")
    add.add_argument("--attr", action="append", default=[], metavar="KEY=VALUE")
    add.add_argument("--alias", action="append", default=[])
    add_visibility(add)
    add_common(add)
    add.set_defaults(run=run_add)

    listing = actions.add_parser("list", help="list entities, of one type if given")
    listing.add_argument("type", nargs="?", help=TYPES)
    add_common(listing)
    listing.set_defaults(run=run_list)

    show = actions.add_parser("show", help="an entity with its relationships and facts")
    show.add_argument("name", help="name, alias or id")
    add_common(show)
    show.set_defaults(run=run_show)

    edit = actions.add_parser("edit", help="change an entity")
    edit.add_argument("name", help="name, alias or id")
    edit.add_argument("--rename", metavar="NAME")
    edit.add_argument("--type", dest="new_type", help=TYPES)
    edit.add_argument("--attr", action="append", default=[], metavar="KEY=VALUE")
    edit.add_argument("--unset", action="append", default=[], metavar="KEY")
    edit.add_argument("--alias", action="append", default=[])
    edit.add_argument("--remove-alias", action="append", default=[])
    add_common(edit)
    add_embedder_options(edit)
    edit.set_defaults(run=run_edit)

    remove = actions.add_parser("remove", help="remove an entity with its relationships and facts")
    remove.add_argument("name", help="name, alias or id")
    remove.add_argument("--yes", action="store_true", help="do not ask first")
    add_common(remove)
    remove.set_defaults(run=run_remove)

    relate = commands.add_parser("relate", help="relate two entities: SOURCE TYPE TARGET")
    relate.add_argument("source")
    relate.add_argument("rel_type", metavar="TYPE", help="KNOWS, MEMBER_OF, ALLIED_WITH, ...")
    relate.add_argument("target")
    relate.add_argument(
        "--confidence", type=float, default=1.0, help="below 1 marks a rumour (default 1)"
    )
    add_visibility(relate)
    add_common(relate)
    add_embedder_options(relate)
    relate.set_defaults(run=run_relate)


def entity_type(text: str) -> EntityType:
    try:
        return EntityType(text.lower())
    except ValueError:
        raise InvalidInputError(
            f"Unknown type {text!r}; use one of: {TYPES}.", field="type"
        ) from None


def entity_json(entity: Entity) -> dict[str, Any]:
    return entity.model_dump(mode="json")


async def run_add(args: argparse.Namespace) -> int:
    async with campaign_desk(args, create=True) as desk:
        entities = await entity_resolver(desk)
        new = build(
            NewEntity,
            id=args.id,
            type=entity_type(args.type),
            name=args.name,
            aliases=tuple(args.alias),
            attributes=parse_attributes(args.attr),
            visibility=visibility_of(args, entities),
        )
        stored = await add_entity(desk, new)
    emit(args, entity_json(stored), f"Added {stored.name} ({stored.type.value}, id {stored.id}).")
    return 0


async def run_list(args: argparse.Namespace) -> int:
    wanted = entity_type(args.type) if args.type else None
    async with campaign_desk(args) as desk:
        entities = await list_entities(desk, wanted)
    rows = [
        [e.id, e.name, e.type.value, ", ".join(e.aliases), "secret" if e.visibility.secret else ""]
        for e in entities
    ]
    if args.json:
        emit(args, [entity_json(e) for e in entities], "")
    elif rows:
        print_table(["id", "name", "type", "aliases", ""], rows)
    else:
        print("No entities yet." if wanted is None else f"No {wanted.value} entities.")
    return 0


async def run_show(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        entity = (await entity_resolver(desk)).resolve(args.name)
        snapshot = (await entity_details(desk, entity.id)).snapshot
        rumours = await rumour_rule(desk)
    lines = [f"{entity.name} ({entity.type.value}, id {entity.id})"]
    if entity.aliases:
        lines.append(f"  aliases: {', '.join(entity.aliases)}")
    if entity.visibility.secret or entity.visibility.known_by:
        lines.append(f"  {_who_knows(entity.visibility.secret, entity.visibility.known_by)}")
    lines += [f"  {key}: {value}" for key, value in entity.attributes.items()]
    for related in snapshot.relationships:
        rel = related.relationship
        lines.append(
            f"  rel:{rel.id}  {seen_from(entity.name, related)}"
            f"{_marks(rel.provenance, rel.visibility, rumours)}"
        )
    for fact in snapshot.facts:
        marks = _marks(fact.provenance, fact.visibility, rumours)
        lines.append(f"  fact:{fact.id}  {fact.text}{marks}")
    emit(args, snapshot.model_dump(mode="json"), "\n".join(lines))
    return 0


def _who_knows(secret: bool, known_by: tuple[str, ...]) -> str:
    who = ", ".join(known_by) if known_by else ("the DM only" if secret else "everyone")
    return f"{'secret, ' if secret else ''}known by {who}"


def _marks(provenance: Provenance, visibility: Visibility, rumours: RumourRule) -> str:
    marks = []
    if rumours.is_rumour(provenance):
        marks.append(f"rumour, {provenance.confidence:.0%}")
    if visibility.secret:
        marks.append("secret")
    return f"  ({'; '.join(marks)})" if marks else ""


async def run_edit(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        entity = (await entity_resolver(desk)).resolve(args.name)
        attributes = {**entity.attributes, **parse_attributes(args.attr)}
        for key in args.unset:
            if key not in attributes:
                raise InvalidInputError(f"--unset {key!r}: {entity.name} has no such attribute.")
            del attributes[key]
        aliases = [a for a in entity.aliases if a not in args.remove_alias]
        aliases += [a for a in args.alias if a not in aliases]
        stored = await edit_entity(
            desk,
            entity,
            build(
                NewEntity,
                id=entity.id,
                type=entity_type(args.new_type) if args.new_type else entity.type,
                name=args.rename or entity.name,
                aliases=tuple(aliases),
                attributes=attributes,
                visibility=entity.visibility,
            ),
        )
    emit(args, entity_json(stored), f"Updated {stored.name} (id {stored.id}).")
    return 0


async def run_remove(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        entity = (await entity_resolver(desk)).resolve(args.name)
        snapshot = (await entity_details(desk, entity.id)).snapshot
        what = (
            f"{entity.name} ({entity.type.value}) with its "
            f"{counted(len(snapshot.relationships), 'relationship')} and "
            f"{counted(len(snapshot.facts), 'fact')}"
        )
        if not args.yes:
            if not sys.stdin.isatty():
                raise InvalidInputError(
                    f"Removing {what} needs --yes when not asked at a terminal."
                )
            answer = input(f"Remove {what}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("Nothing removed.")
                return 1
        await remove_entity(desk, entity.id)
    emit(args, {"removed": entity.id}, f"Removed {what}.")
    return 0


async def run_relate(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        entities = await entity_resolver(desk)
        source = entities.resolve(args.source, "source")
        target = entities.resolve(args.target, "target")
        stored = await relate(
            desk,
            source.id,
            checked_relationship_type(args.rel_type, "TYPE"),
            target.id,
            confidence=args.confidence,
            visibility=visibility_of(args, entities),
        )
    sentence = relationship_sentence(source.name, stored.rel_type, target.name)
    emit(args, stored.model_dump(mode="json"), f"rel:{stored.id}  {sentence}")
    return 0
