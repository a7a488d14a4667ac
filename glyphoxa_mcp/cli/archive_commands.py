"""`campaign export C FILE` and `campaign import FILE [--as NEW]`: a campaign's archive
written and restored (desk/archive_actions.py, docs/reference/campaign-archive.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from glyphoxa_mcp.cli.dm_support import emit
from glyphoxa_mcp.cli.options import (
    add_database_options,
    add_embedder_options,
    app_settings,
    database_settings,
)
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.archive_actions import export_campaign, import_campaign
from glyphoxa_mcp.errors import InvalidInputError

# The tables a summary names, in its words, the rest counted together.
SUMMARY = (
    ("sessions", "sessions"),
    ("session_entries", "lines"),
    ("chunks", "passages"),
    ("entities", "entities"),
    ("relationships", "relationships"),
    ("facts", "facts"),
)


def register_archive(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = actions.add_parser(
        "export",
        help="write everything stored for a campaign into one archive file (gzip'd JSON "
        "Lines), to keep or to import elsewhere",
    )
    export.add_argument("campaign", help="the campaign to export")
    export.add_argument("file", type=Path, help="the archive to write (replaced if it exists)")
    export.add_argument("--json", action="store_true", help="print JSON for scripts")
    add_database_options(export)
    export.set_defaults(run=run_export)

    restore = actions.add_parser(
        "import",
        help="restore a campaign from its archive, in one transaction (vectors made again "
        "when the database's embedding model is another)",
    )
    restore.add_argument("file", type=Path, help="an archive `campaign export` wrote")
    restore.add_argument(
        "--as",
        dest="as_id",
        metavar="NEW",
        help="import under this campaign id (needed when the archive's id exists here)",
    )
    restore.add_argument("--json", action="store_true", help="print JSON for scripts")
    add_database_options(restore)
    add_embedder_options(restore)
    restore.set_defaults(run=run_import)


async def run_export(args: argparse.Namespace) -> int:
    target: Path = args.file
    # Written beside the target and renamed when whole: a failed export leaves no archive.
    partial = target.with_name(f".{target.name}.partial")
    written = 0
    try:
        async with await Database.open(database_settings(args), max_size=2) as db:
            with partial.open("wb") as out:
                async for piece in export_campaign(db, args.campaign):
                    out.write(piece)
                    written += len(piece)
        os.replace(partial, target)
    except OSError as exc:
        raise InvalidInputError(f"{target}: cannot be written ({exc}).", field="FILE") from None
    finally:
        partial.unlink(missing_ok=True)
    emit(
        args,
        {"campaign": args.campaign, "file": str(target), "bytes": written},
        f"Exported campaign {args.campaign!r} to {target} ({written / 1e6:.1f} MB).",
    )
    return 0


async def run_import(args: argparse.Namespace) -> int:
    async with await Database.open(database_settings(args), max_size=2) as db:
        imported = await import_campaign(
            db, str(args.file), as_id=args.as_id, embedding=app_settings(args).embedding
        )
    counted = ", ".join(f"{imported.rows.get(table, 0)} {words}" for table, words in SUMMARY)
    vectors = (
        f" Vectors were made again with {imported.embedding_model}."
        if imported.vectors_made_again
        else ""
    )
    emit(
        args,
        imported.model_dump(mode="json"),
        f"Imported campaign {imported.campaign_id!r} from {args.file}: {counted}.{vectors}\n"
        f"Access tokens are not archived: glyphoxa-mcp token create --campaign "
        f"{imported.campaign_id} ...",
    )
    return 0
