"""`correct`: try name correction on transcript lines, e.g. a name list before play."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from glyphoxa_mcp.bounded_input import load_json, load_json_line
from glyphoxa_mcp.cli.campaign_commands import read_text
from glyphoxa_mcp.cli.dm_support import add_campaign_option, campaign_desk
from glyphoxa_mcp.cli.options import add_database_options
from glyphoxa_mcp.errors import InvalidInputError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    correct = commands.add_parser(
        "correct",
        help="put misheard names back in JSON Lines of utterances (stdin or FILE)",
        description=(
            "Reads one JSON object per line with 'utterance' (and optionally 'entities', a "
            "list of names) and writes one line per input line, in order, with every other "
            "field kept and 'corrected' and 'corrections' added. Names come from the line's "
            "'entities', else from --entities, else from the campaign's entities and aliases."
        ),
    )
    correct.add_argument("file", nargs="?", type=Path, help="JSON Lines (default: stdin)")
    correct.add_argument(
        "--entities",
        type=Path,
        metavar="FILE",
        help="names to correct to: a JSON list of names or of objects with 'name' (and "
        "'aliases'), or one name per line",
    )
    correct.add_argument(
        "--threshold", type=float, help="least similarity to replace (default: 0.72)"
    )
    add_campaign_option(
        correct,
        help="campaign whose entities to use when no names are given; unset, the only "
        "campaign there is",
    )
    add_database_options(correct)
    correct.set_defaults(run=run_correct)


def read_names_file(path: Path) -> list[str]:
    text = read_text(path)
    if not text.lstrip().startswith("["):
        return [line.strip() for line in text.splitlines() if line.strip()]
    try:
        items = load_json(text, str(path))
    except InvalidInputError as exc:
        raise InvalidInputError(exc.message, field="--entities") from None
    names: list[str] = []
    for position, item in enumerate(items, 1):
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            aliases = item.get("aliases", [])
            if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                raise InvalidInputError(
                    f"{path}: item {position}: 'aliases' must be a list of names.",
                    field="--entities",
                )
            names += [item["name"], *aliases]
        else:
            raise InvalidInputError(
                f"{path}: item {position} must be a name or an object with a 'name'.",
                field="--entities",
            )
    return names


def read_requests(stream: TextIO, source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(stream, 1):
        if not line.strip():
            continue
        request = load_json_line(line, f"{source}:{number}")
        if not isinstance(request, dict):
            raise InvalidInputError(f"{source}:{number}: each line must be a JSON object.")
        if not isinstance(request.get("utterance"), str):
            raise InvalidInputError(f"{source}:{number}: 'utterance' (a string) is missing.")
        names = request.get("entities")
        if names is not None and (
            not isinstance(names, list) or not all(isinstance(n, str) for n in names)
        ):
            raise InvalidInputError(f"{source}:{number}: 'entities' must be a list of names.")
        yield number, request


async def run_correct(args: argparse.Namespace) -> int:
    from glyphoxa_mcp.correction.known_names import CorrectorCache
    from glyphoxa_mcp.correction.name_index import KnownName
    from glyphoxa_mcp.correction.phonetic import PhoneticSettings

    if args.threshold is not None and not 0 <= args.threshold <= 1:
        raise InvalidInputError("--threshold must be between 0 and 1.", field="--threshold")
    settings = (
        PhoneticSettings(threshold=args.threshold)
        if args.threshold is not None
        else PhoneticSettings()
    )
    cache = CorrectorCache(settings)
    default_names: tuple[KnownName, ...] | None = None
    if args.entities is not None:
        default_names = tuple(KnownName(n) for n in read_names_file(args.entities))
    if args.file is not None:
        stream: TextIO = io.StringIO(read_text(args.file))
        source = str(args.file)
    else:
        stream, source = sys.stdin, "stdin"
    for _, request in read_requests(stream, source):
        if request.get("entities") is not None:
            names = tuple(KnownName(n) for n in request["entities"])
        else:
            if default_names is None:
                default_names = await _campaign_names(args)
            names = default_names
        result = cache.for_names(names).correct(request["utterance"])
        request["corrected"] = result.corrected
        request["corrections"] = [
            c.model_dump(exclude={"score"}, exclude_none=True) for c in result.corrections
        ]
        print(json.dumps(request, ensure_ascii=False), flush=True)
    return 0


async def _campaign_names(args: argparse.Namespace) -> tuple[Any, ...]:
    from glyphoxa_mcp.correction.known_names import names_of
    from glyphoxa_mcp.desk.name_actions import entity_names

    async with campaign_desk(args) as desk:
        return names_of(await entity_names(desk))
