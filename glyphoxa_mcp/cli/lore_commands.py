"""`lore add|list|remove|pin|unpin`: the DM's documents, found by memory.search_facts and
pinned to NPCs' hot contexts."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path, PurePath

from glyphoxa_mcp.cli.campaign_commands import read_text
from glyphoxa_mcp.cli.dm_support import add_common, campaign_desk, emit
from glyphoxa_mcp.cli.options import add_embedder_options
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.desk.lore_actions import (
    add_lore,
    lore_document,
    lore_documents,
    pin_lore,
    remove_lore,
    unpin_lore,
)
from glyphoxa_mcp.desk.name_actions import entity_resolver
from glyphoxa_mcp.domain.lore_models import AddedDocument, LoreDocument
from glyphoxa_mcp.domain.models import Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.lore.documents import (
    KINDS,
    MAX_LORE_FILE_CHARS,
    ParsedDocument,
    kind_of,
    parse_document,
)
from glyphoxa_mcp.lore.references import SectionReference, parse_reference

# A folder of more lore files than this is more likely a mistake than a library.
MAX_FILES = 1000


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lore = commands.add_parser(
        "lore", help="the lore library: documents NPCs find with memory.search_facts"
    )
    actions = lore.add_subparsers(title="actions", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        help="add Markdown, text or Foundry journal exports (a file, or every one in a folder "
        "in one go); adding one again updates it",
    )
    add.add_argument("path", type=Path, metavar="FILE|DIR")
    add.add_argument("--id", help="the document's id (one file only; default: from its name)")
    add.add_argument("--secret", action="store_true", help="only --known-by NPCs (or the DM)")
    add.add_argument(
        "--known-by",
        action="append",
        default=[],
        metavar="NPC[,NPC...]",
        help="NPCs who know it, and only they (repeat or separate with commas)",
    )
    add_common(add)
    add_embedder_options(add)
    add.set_defaults(run=run_add)

    listing = actions.add_parser("list", help="the documents, or one document's sections")
    listing.add_argument("document", nargs="?", metavar="DOC")
    add_common(listing)
    listing.set_defaults(run=run_list)

    remove = actions.add_parser(
        "remove", help="remove a document with its sections, words, vectors and pins"
    )
    remove.add_argument("document", metavar="DOC")
    add_common(remove)
    remove.set_defaults(run=run_remove)

    for name, run, text in (
        (
            "pin",
            run_pin,
            "keep a section in an NPC's hot context; a section the NPC may not know is "
            "refused (pinning tells no secret: add the document with --known-by first)",
        ),
        ("unpin", run_unpin, "take a pinned section out of an NPC's hot context"),
    ):
        pin = actions.add_parser(name, help=text)
        pin.add_argument(
            "section",
            metavar="DOC#heading",
            help="a document and a heading path ('Part > Chapter', or its end); DOC alone is "
            "its text before the first heading",
        )
        pin.add_argument("--npc", required=True, metavar="ID", help="the NPC (name or id)")
        add_common(pin)
        pin.set_defaults(run=run)


def lore_files(path: Path) -> tuple[list[tuple[Path, PurePath]], list[PurePath]]:
    """The lore files at `path` with their paths within it (a file: its name), in order, and
    the files of a folder that are not lore. Hidden files and folders are left out."""
    if path.is_file():
        return [(path, PurePath(path.name))], []
    if not path.is_dir():
        raise InvalidInputError(f"{path}: no such file or folder.")
    found: list[tuple[Path, PurePath]] = []
    other: list[PurePath] = []
    for folder, folders, files in os.walk(path):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(f for f in files if not f.startswith(".")):
            relative = PurePath(folder, name).relative_to(path)
            if kind_of(name) is None:
                other.append(relative)
                continue
            found.append((Path(folder, name), relative))
            if len(found) > MAX_FILES:
                raise InvalidInputError(
                    f"{path}: more than {MAX_FILES} lore files; add its folders one at a time."
                )
    if not found:
        suffixes = ", ".join(KINDS)
        raise InvalidInputError(f"{path}: no lore files in it ({suffixes}).")
    return sorted(found, key=lambda file: file[1]), sorted(other)


def parse_files(files: list[tuple[Path, PurePath]], doc_id: str | None) -> list[ParsedDocument]:
    """Every file's document; when any is bad, each bad one is reported on stderr and
    nothing is added."""
    parsed: list[ParsedDocument] = []
    errors: list[str] = []
    for file, relative in files:
        try:
            text = read_text(file, MAX_LORE_FILE_CHARS)
            parsed.append(parse_document(text, str(file), relative, doc_id))
        except InvalidInputError as exc:
            errors.append(str(exc))
    if errors:
        for error in errors:
            print(error, file=sys.stderr)
        raise InvalidInputError(
            f"{len(errors)} of {len(files)} lore files cannot be added (above); nothing was added."
        )
    return parsed


def known_by(values: list[str]) -> list[str]:
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


async def run_add(args: argparse.Namespace) -> int:
    files, skipped = lore_files(args.path)
    if args.id is not None and (len(files) > 1 or args.path.is_dir()):
        raise InvalidInputError("--id names one document: add a single file with it.")
    documents = parse_files(files, args.id)
    async with campaign_desk(args, create=True) as desk:
        entities = await entity_resolver(desk)
        knowers = sorted(
            {entities.resolve(name, "--known-by").id for name in known_by(args.known_by)}
        )
        visibility = Visibility(secret=args.secret, known_by=tuple(knowers))
        added = await add_lore(desk, documents, visibility)
    counts = {d.id: len(d.sections) for d in documents}
    emit(
        args,
        {
            "documents": [a.model_dump(mode="json") | {"sections": counts[a.id]} for a in added],
            "skipped": [str(s) for s in skipped],
        },
        _added_report(added, counts, skipped),
    )
    return 0


def _added_report(
    added: list[AddedDocument], counts: dict[str, int], skipped: list[PurePath]
) -> str:
    lines = [
        f"{a.id}: {a.action} ({counts[a.id]} section{'s' * (counts[a.id] != 1)})" for a in added
    ]
    for document in added:
        for pin in document.pins_dropped:
            lines.append(
                f"Unpinned {SectionReference(document.id, pin.heading)} from {pin.npc_id}: the "
                "section is gone or the NPC may no longer know it."
            )
    if skipped:
        lines.append(
            f"Skipped {counted(len(skipped), 'file')} that are not lore: "
            + ", ".join(str(s) for s in skipped[:5])
            + (" ..." if len(skipped) > 5 else "")
        )
    return "\n".join(lines)


def _visibility(visibility: Visibility) -> str:
    who = ", ".join(visibility.known_by)
    if visibility.secret:
        return f"secret, known by {who}" if who else "secret (the DM only)"
    return f"known by {who}" if who else ""


async def run_list(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        if args.document is None:
            documents = await lore_documents(desk)
            return _list_documents(args, documents)
        details = await lore_document(desk, args.document)
    document, sections, pins = details.document, details.headings, details.pins
    pinned: dict[str, list[str]] = {}
    for pin in pins:
        pinned.setdefault(pin.heading, []).append(pin.npc_id)
    if args.json:
        emit(
            args,
            document.model_dump(mode="json")
            | {
                "headings": [
                    s.model_dump() | {"pinned_to": pinned.get(s.heading, [])} for s in sections
                ]
            },
            "",
        )
        return 0
    who = _visibility(document.visibility)
    print(f"{document.id}: {document.title} ({document.source_name})" + (f", {who}" if who else ""))
    print_table(
        ["heading", "pieces", "characters", "pinned to"],
        [
            [
                s.heading or "(before the first heading)",
                s.pieces,
                s.characters,
                ", ".join(pinned.get(s.heading, [])),
            ]
            for s in sections
        ],
    )
    return 0


def _list_documents(args: argparse.Namespace, documents: list[LoreDocument]) -> int:
    if args.json:
        emit(args, [d.model_dump(mode="json") for d in documents], "")
    elif documents:
        print_table(
            ["id", "title", "kind", "sections", "pins", "who knows"],
            [
                [d.id, d.title, d.source_kind, d.sections, d.pins, _visibility(d.visibility)]
                for d in documents
            ],
        )
    else:
        print("No lore yet: `glyphoxa-mcp lore add FILE|DIR` adds some.")
    return 0


async def run_remove(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        document = await remove_lore(desk, args.document)
    emit(
        args,
        {"removed": document.id},
        f"Removed lore document {document.id} with its {counted(document.sections, 'section')} "
        f"and {counted(document.pins, 'pin')}.",
    )
    return 0


async def _npc_and_section(
    desk: CampaignDesk, args: argparse.Namespace
) -> tuple[str, SectionReference]:
    """The NPC's id, and the section as given."""
    npc = (await entity_resolver(desk)).resolve(args.npc, "--npc")
    if npc.type is not EntityType.NPC:
        raise InvalidInputError(
            f"--npc: {npc.name} is a {npc.type.value}; lore is pinned to NPCs.", field="--npc"
        )
    return npc.id, parse_reference(args.section)


async def run_pin(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        npc_id, reference = await _npc_and_section(desk, args)
        pinned = await pin_lore(desk, npc_id, reference)
    where, new = pinned.section, pinned.new
    emit(
        args,
        {"npc": npc_id, "document": where.document_id, "heading": where.heading, "new": new},
        f"Pinned {where} to {npc_id}'s hot context." if new else f"{where} was pinned already.",
    )
    return 0


async def run_unpin(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        npc_id, reference = await _npc_and_section(desk, args)
        where = await unpin_lore(desk, npc_id, reference)
    emit(
        args,
        {"npc": npc_id, "document": where.document_id, "heading": where.heading},
        f"Unpinned {where} from {npc_id}'s hot context.",
    )
    return 0
