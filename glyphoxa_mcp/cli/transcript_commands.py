"""`transcript forget line:ID`: a line of a transcript forgotten (desk/session_actions.py)."""

from __future__ import annotations

import argparse

from glyphoxa_mcp.cli.dm_support import add_common, chosen_campaign, emit, parse_item
from glyphoxa_mcp.cli.options import add_embedder_options, app_settings
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import InvalidInputError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    transcript = commands.add_parser("transcript", help="the lines of the sessions' transcripts")
    actions = transcript.add_subparsers(title="actions", metavar="ACTION", required=True)
    forget = actions.add_parser(
        "forget",
        help="remove a line (line:ID, as `session show` lists them) from the transcript and "
        "from everything made of it; the session's summary is flagged for review",
    )
    forget.add_argument("line", help="line:ID")
    add_embedder_options(forget)
    add_common(forget)
    forget.set_defaults(run=run_forget)


def line_id(reference: str) -> int:
    kind, item = parse_item(reference)
    if kind != "line" or not isinstance(item, int):
        raise InvalidInputError(
            f"{reference!r}: name the line as line:ID (`glyphoxa-mcp session show SESSION` "
            "lists them).",
            field="line",
        )
    return item


async def run_forget(args: argparse.Namespace) -> int:
    from glyphoxa_mcp.app import open_app
    from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
    from glyphoxa_mcp.desk.session_actions import forget_line

    entry_id = line_id(args.line)
    async with open_app(app_settings(args), max_connections=2) as app:
        desk = await CampaignDesk.of(app, await chosen_campaign(args, app.db))
        forgotten = await forget_line(desk, entry_id)
    summary = {
        "rewritten": " Its summary was written again without it and waits for review"
        + (" (and for `session end --retry-llm`)." if forgotten.llm_pending else "."),
        "kept": " The DM's summary of the session is kept and waits for review.",
        "none": "",
    }[forgotten.summary]
    held = f"{counted(forgotten.passages_removed, 'passage')} held it"
    passages = (
        f"{held}; {forgotten.passages_added} {'was' if forgotten.passages_added == 1 else 'were'} "
        "cut again from the lines left."
        if forgotten.passages_pending is None
        else f"{held}; the lines left are not indexed again yet "
        f"({forgotten.passages_pending}): glyphoxa-mcp process {forgotten.session_id}"
    )
    emit(
        args,
        forgotten.model_dump(mode="json"),
        f"Forgot line:{forgotten.entry_id} of session {forgotten.session_id!r}. {passages}"
        + summary,
    )
    return 0
