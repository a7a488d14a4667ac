"""`ingest FILE --session ID`, `process SESSION`, `session list|show|facts|end|delete`."""

from __future__ import annotations

import argparse
import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from glyphoxa_mcp.cli.campaign_commands import read_text
from glyphoxa_mcp.cli.dm_support import (
    add_common,
    campaign_desk,
    checked_session,
    chosen_campaign,
    emit,
)
from glyphoxa_mcp.cli.options import (
    add_embedder_options,
    add_llm_options,
    app_settings,
    database_settings,
)
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.cli.progress import Progress
from glyphoxa_mcp.cli.scene_commands import register_scenes
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.desk.scene_actions import line_hearers
from glyphoxa_mcp.desk.session_actions import (
    delete_session,
    end_session,
    get_session,
    ingest_transcript,
    list_sessions,
    process_session,
    read_transcript,
    session_facts,
    session_lines,
    sessions_waiting_for_llm,
    summaries_to_review,
)
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import InvalidInputError

if TYPE_CHECKING:
    from glyphoxa_mcp.domain.reports import EndReport, ExtractionReport


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ingest = commands.add_parser(
        "ingest",
        help="store a transcript (JSON Lines, or 'Speaker: text' lines); again adds nothing",
    )
    ingest.add_argument("file", type=Path)
    ingest.add_argument("--session", required=True, help="the session it belongs to")
    ingest.add_argument("--title", help="the session's title")
    ingest.add_argument(
        "--start",
        help="for 'Speaker: text' files: when the session began "
        "(ISO time; default now); lines are placed 5 s apart",
    )
    add_common(ingest)
    ingest.set_defaults(run=run_ingest)

    process = commands.add_parser(
        "process", help="cut a session into passages, link known entities and embed them"
    )
    process.add_argument("session")
    add_embedder_options(process)
    add_llm_options(process)
    add_common(process)
    process.set_defaults(run=run_process)

    session = commands.add_parser("session", help="the campaign's sessions")
    sessions = session.add_subparsers(title="actions", metavar="ACTION", required=True)
    listing = sessions.add_parser("list", help="the sessions, oldest first")
    add_common(listing)
    listing.set_defaults(run=run_list)
    show = sessions.add_parser(
        "show", help="the session's lines with their ids (for `secret mark line:ID`)"
    )
    show.add_argument("session")
    show.add_argument("--grep", metavar="TEXT", help="only lines holding TEXT (any case)")
    add_common(show)
    show.set_defaults(run=run_show)
    facts = sessions.add_parser(
        "facts",
        help="the session's temporary facts (set by a recorder; gone when it ends)",
    )
    facts.add_argument("session")
    add_common(facts)
    facts.set_defaults(run=run_facts)
    end = sessions.add_parser(
        "end", help="finish a session: index it, summarise it, and record its episode"
    )
    end.add_argument("session", nargs="?", help="the session (with --retry-llm: default all)")
    end.add_argument("--at", help="when it ended (ISO time; default: its last utterance)")
    end.add_argument(
        "--retry-llm",
        action="store_true",
        help="end again, with the LLM, the sessions ended while it could not be reached "
        "(this one, or every one waiting)",
    )
    add_embedder_options(end)
    add_llm_options(end)
    add_common(end)
    end.set_defaults(run=run_end)
    delete = sessions.add_parser(
        "delete",
        help="delete a session: its lines, passages, summary, episode, and what was learned "
        "in it that the DM did not decide",
    )
    delete.add_argument("session")
    add_common(delete)
    delete.set_defaults(run=run_delete)
    register_scenes(sessions)


def _start(text: str | None) -> datetime:
    if text is None:
        return datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(f"--start {text!r} is not an ISO time.", field="--start") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


async def run_ingest(args: argparse.Namespace) -> int:
    checked_session(args.session)
    transcript = read_transcript(read_text(args.file), str(args.file), _start(args.start))
    async with await Database.open(database_settings(args), max_size=2) as db:
        report = await ingest_transcript(
            db, await chosen_campaign(args, db), args.session, transcript, title=args.title
        )
    emit(
        args,
        {"session": report.session_id, "read": report.read, "added": report.added},
        f"Session {report.session_id!r}: {counted(report.added, 'new utterance')} "
        f"({report.read - report.added} already stored). Next: glyphoxa-mcp process "
        f"{report.session_id}",
    )
    return 0


async def run_process(args: argparse.Namespace) -> int:
    from glyphoxa_mcp.app import open_app

    async with open_app(app_settings(args), max_connections=2) as app:
        desk = await CampaignDesk.of(app, await chosen_campaign(args, app.db))
        report = await process_session(
            desk, args.session, on_progress=Progress(f"embedding {args.session}")
        )
    emit(
        args,
        {
            "session": report.session_id,
            "entries": report.entries,
            "corrected": report.corrected,
            "passages": report.passages,
            "embedded": report.embedded,
            "removed": report.removed,
        },
        f"Session {report.session_id!r}: {counted(report.corrected, 'utterance')} with names "
        f"corrected; {counted(report.entries, 'utterance')} in "
        f"{counted(report.passages, 'passage')}, linked to known entities and embedded.",
    )
    return 0


async def run_list(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        sessions = await list_sessions(desk)
        to_review = set(await summaries_to_review(desk))
    if args.json:
        emit(
            args,
            [
                s.model_dump(mode="json") | {"summary_needs_review": s.id in to_review}
                for s in sessions
            ],
            "",
        )
    elif sessions:
        print_table(
            ["id", "title", "started", "ended", "summary"],
            [
                [
                    s.id,
                    s.title or "",
                    _day(s.started_at),
                    _day(s.ended_at),
                    (s.summary_source or "")
                    + (" (waiting for the LLM)" if s.llm_pending else "")
                    + (" (to review: lines were forgotten)" if s.id in to_review else ""),
                ]
                for s in sessions
            ],
        )
    else:
        print("No sessions yet.")
    return 0


async def run_show(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        session = await get_session(desk, checked_session(args.session))
        lines = await session_lines(desk, session.id)
        hearers = await line_hearers(desk, session.id)
    if args.grep:
        wanted = args.grep.casefold()
        lines = [e for e in lines if wanted in f"{e.speaker_name}: {e.text}".casefold()]
    if args.json:
        emit(
            args,
            [
                {
                    **e.model_dump(mode="json", exclude={"words"}),
                    "heard_by": _listed(hearers.get(e.id)),
                }
                for e in lines
            ],
            "",
        )
        return 0
    marks = " (DM-only session)" if session.dm_only else ""
    print(f"Session {session.id!r}: {session.title or 'untitled'}{marks}")
    if not lines:
        print("No lines." if not args.grep else f"No line holds {args.grep!r}.")
        return 0
    witnessed = any(hearers.get(e.id) is not None for e in lines)
    print_table(
        ["line", "spoken", "speaker", "text", *(["heard by"] if witnessed else []), ""],
        [
            [
                f"line:{e.id}",
                e.spoken_at.strftime("%Y-%m-%d %H:%M:%S"),
                e.speaker_name,
                e.text,
                *([", ".join(hearers.get(e.id) or ()) or "no NPC"] if witnessed else []),
                "DM-only" if e.dm_only else "",
            ]
            for e in lines
        ],
    )
    return 0


def _listed(heard_by: tuple[str, ...] | None) -> list[str] | None:
    return None if heard_by is None else list(heard_by)


async def run_facts(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        facts = await session_facts(desk, args.session)
    if args.json:
        emit(args, [f.model_dump(mode="json") for f in facts], "")
    elif facts:
        print_table(
            ["key", "for", "set", "text"],
            [[f.key, f.npc_id or "every NPC", _day(f.set_at), f.text] for f in facts],
        )
        print(
            "\nThey are cleared when the session ends; to keep one, add it as a fact: "
            'glyphoxa-mcp fact add SUBJECT "TEXT" --session ' + args.session
        )
    else:
        print(f"Session {args.session!r} has no session facts.")
    return 0


def _day(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ""


async def run_end(args: argparse.Namespace) -> int:
    from glyphoxa_mcp.app import open_app

    if args.session is None and not args.retry_llm:
        raise InvalidInputError("Name the session to end (glyphoxa-mcp session list).")
    async with open_app(app_settings(args), max_connections=2) as app:
        desk = await CampaignDesk.of(app, await chosen_campaign(args, app.db))
        if args.retry_llm:
            if app.chat is None:
                raise InvalidInputError(
                    "--retry-llm needs an LLM: set OPENAI_API_KEY (or GLYPHOXA_OPENAI_API_KEY) "
                    "or --openai-base-url, and do not pass --no-llm."
                )
            sessions = (
                [args.session]
                if args.session
                else [s.id for s in await sessions_waiting_for_llm(desk)]
            )
            if not sessions:
                emit(args, [], "No session is waiting for the LLM.")
                return 0
        else:
            sessions = [args.session]
        reports = [
            await end_session(desk, session_id, _start(args.at) if args.at else None)
            for session_id in sessions
        ]
    outcome = [_ended(report) for report in reports]
    emit(
        args,
        [data for data, _ in outcome] if args.retry_llm else outcome[0][0],
        "\n\n".join(text for _, text in outcome),
    )
    return 0


def _ended(report: EndReport) -> tuple[dict[str, object], str]:
    data = {
        "session": report.session_id,
        "ended_at": report.ended_at,
        "summary": report.summary,
        "summary_source": report.summary_source,
        "episode": report.episode_id,
        "participants": list(report.participants),
        "mentioned": list(report.mentioned),
        "extraction": dataclasses.asdict(report.extraction) if report.extraction else None,
        "llm_unreachable": report.llm_unreachable,
        "session_facts_cleared": list(report.session_facts_cleared),
    }
    text = (
        f"Session {report.session_id!r} ended {_day(report.ended_at)}.\n\n{report.summary}\n\n"
        f"Episode {report.episode_id}: {counted(len(report.participants), 'entity')} took part, "
        f"{counted(len(report.mentioned), 'entity')} mentioned."
        + (_extracted(report.extraction) if report.extraction else "")
    )
    if report.session_facts_cleared:
        text += f"\nSession facts cleared: {', '.join(report.session_facts_cleared)}."
    if report.llm_unreachable:
        text += (
            f"\nThe LLM could not be reached ({report.llm_unreachable}): this is the offline "
            f"summary. When it is back: glyphoxa-mcp session end {report.session_id} --retry-llm"
        )
    return data, text


def _extracted(report: ExtractionReport) -> str:
    return (
        f"\nFrom the transcript: {counted(len(report.entities_added), 'new entity')}, "
        f"{len(report.entities_held)} held for review (glyphoxa-mcp review list), "
        f"{counted(report.relationships, 'relationship')}, {counted(report.facts, 'fact')}."
    )


async def run_delete(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        deleted = await delete_session(desk, checked_session(args.session))
    kept = deleted.facts_kept + deleted.relationships_kept
    emit(
        args,
        deleted.model_dump(mode="json"),
        f"Deleted session {deleted.session_id!r}: {counted(deleted.lines, 'line')}, "
        f"{counted(deleted.passages, 'passage')}, {counted(deleted.facts_deleted, 'fact')} and "
        f"{counted(deleted.relationships_deleted, 'relationship')} learned in it"
        + (", its episode" if deleted.episode_deleted else "")
        + (
            f", {counted(deleted.proposals_deleted, 'proposal')}"
            if deleted.proposals_deleted
            else ""
        )
        + "."
        + (
            f"\nKept {counted(deleted.facts_kept, 'fact')} and "
            f"{counted(deleted.relationships_kept, 'relationship')} the DM decided (no longer "
            "linked to it)."
            if kept
            else ""
        ),
    )
    return 0
