"""`record --session ID`: a session recorded from stdin as it is played.

    tail -f bridge.log | glyphoxa-mcp record --session s7 --campaign salt

Each line (a JSON utterance, or `Speaker: text`) is stored at once in a transaction of its
own, names put back, and is searchable seconds later. A bad line is reported and skipped;
the stream goes on.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

import anyio

from glyphoxa_mcp.cli.dm_support import add_common, checked_session, chosen_campaign
from glyphoxa_mcp.cli.options import add_embedder_options, add_llm_options, app_settings
from glyphoxa_mcp.cli.signals import interruptible_stdin, stopping_on_signal
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recording.line_input import MAX_LINE_CHARS, parse_line
from glyphoxa_mcp.recording.utterances import RecordedUtterance, StoredUtterance


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    record = commands.add_parser(
        "record",
        help="record a session from stdin as it is played (JSON Lines or 'Speaker: text')",
        description="Reads utterances from stdin as they come (pipe `tail -f` of a bridge's "
        "log into it, or type 'Speaker: text'): each line is stored at once with misheard "
        "names put back, shown in hot contexts and searchable within seconds. JSON lines "
        "carry speaker_id, speaker_name, text and optionally timestamp (default: now), "
        "utterance_id, npc_id, duration_ms, words. With an LLM, scenes are extracted as they "
        "close. End the session afterwards with `glyphoxa-mcp session end ID`.",
    )
    record.add_argument("--session", required=True, help="the session to record into")
    record.add_argument("--title", help="the session's title")
    add_embedder_options(record)
    add_llm_options(record)
    add_common(record)
    record.set_defaults(run=run_record)


async def _read_line() -> str:
    """The next line of stdin, at most MAX_LINE_CHARS + 1 characters of it ("" at the end)."""
    return await anyio.to_thread.run_sync(
        sys.stdin.readline, MAX_LINE_CHARS + 1, abandon_on_cancel=True
    )


def _echo(recorded: RecordedUtterance, speaker: str) -> str:
    if not isinstance(recorded, StoredUtterance):
        return "already stored"
    fixed = ", ".join(f"{c.heard} -> {c.entity}" for c in recorded.corrections)
    return f"#{recorded.entry_id} {speaker}: {recorded.text}" + (f"  [{fixed}]" if fixed else "")


async def run_record(args: argparse.Namespace) -> int:
    from glyphoxa_mcp.app import open_app
    from glyphoxa_mcp.desk.session_actions import recording_into
    from glyphoxa_mcp.recording.recorder import Recorder

    checked_session(args.session)
    stored = new = corrected = bad = 0
    # While it runs, the session is being recorded into: deleting it is refused. Without
    # --campaign it is the only campaign there is; a campaign is made only when named.
    async with (
        open_app(app_settings(args), max_connections=4) as app,
        recording_into(app, await chosen_campaign(args, app.db), args.session),
        anyio.create_task_group() as tasks,
    ):
        recorder = Recorder(app, tasks)
        await recorder.start(args.campaign, args.session, title=args.title)
        print(
            f"Recording session {args.session!r} of campaign {args.campaign!r} from stdin "
            "(end with Ctrl-D).",
            file=sys.stderr,
        )
        # SIGINT or SIGTERM ends the input: what was read is stored and made searchable,
        # then the command ends as interrupted.
        with interruptible_stdin() as end_input, stopping_on_signal(end_input):
            number = 0
            while line := await _read_line():
                number += 1
                where = f"stdin:{number}"
                try:
                    utterance = parse_line(line, where, datetime.now(UTC))
                    if utterance is None:
                        continue
                    (recorded,) = await recorder.append(args.campaign, args.session, [utterance])
                except InvalidInputError as exc:
                    bad += 1
                    print(f"glyphoxa-mcp: {exc}", file=sys.stderr)
                    while len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
                        line = await _read_line()  # skip the rest
                    continue
                stored += 1
                new += recorded.new
                corrected += isinstance(recorded, StoredUtterance) and bool(recorded.corrections)
                if args.json:
                    print(recorded.model_dump_json(), flush=True)
                else:
                    print(_echo(recorded, utterance.speaker_name), flush=True)
            await recorder.searchable(args.campaign, args.session)
        tasks.cancel_scope.cancel()
    summary = {"session": args.session, "read": stored, "new": new, "corrected": corrected}
    if not args.json:
        print(
            f"Session {args.session!r}: {counted(new, 'new utterance')} ({stored - new} already "
            f"stored), {corrected} with names put back, all searchable"
            + (f"; {counted(bad, 'bad line')} skipped" if bad else "")
            + f". Next: glyphoxa-mcp session end {args.session}",
            file=sys.stderr,
        )
    else:
        print(json.dumps(summary | {"bad_lines": bad}), file=sys.stderr)
    return 1 if bad else 0
