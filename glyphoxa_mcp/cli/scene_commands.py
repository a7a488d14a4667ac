"""`session scenes S`, `session scene S --at TIME ...` and `session heard-by S line:ID ...`:
who was where, and who heard what, changed after play (desk/scene_actions.py)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from glyphoxa_mcp.cli.dm_support import add_common, campaign_desk, emit
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.desk.scene_actions import (
    remove_scene,
    session_scenes,
    set_line_hearers,
    set_scene,
)
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.domain.wording import comma_separated
from glyphoxa_mcp.errors import InvalidInputError


def register_scenes(sessions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    scenes = sessions.add_parser(
        "scenes", help="the session's scenes: when each started, where, who was present"
    )
    scenes.add_argument("session")
    add_common(scenes)
    scenes.set_defaults(run=run_scenes)
    scene = sessions.add_parser(
        "scene",
        help="add the scene starting at --at, or change who was present, where or its title "
        "(what you leave out is kept); the lines are heard again at once",
    )
    scene.add_argument("session")
    scene.add_argument("--at", required=True, help="when the scene starts (ISO time)")
    scene.add_argument(
        "--present",
        metavar="NPCS",
        help="the NPCs present besides the players, comma-separated names, aliases or ids "
        "(an empty string: nobody)",
    )
    scene.add_argument("--location", metavar="PLACE", help="where it is (a location)")
    scene.add_argument("--title", help="the scene's title")
    scene.add_argument(
        "--remove", action="store_true", help="remove the scene: its lines join the one before"
    )
    add_common(scene)
    scene.set_defaults(run=run_scene)
    heard = sessions.add_parser(
        "heard-by",
        help="say who heard some lines (line:ID as `session show` lists them), whatever their "
        "scene says",
    )
    heard.add_argument("session")
    heard.add_argument("lines", nargs="+", metavar="line:ID")
    who = heard.add_mutually_exclusive_group(required=True)
    who.add_argument("--npcs", help="the NPCs who heard them, comma-separated ('' : none)")
    who.add_argument(
        "--scene", action="store_true", help="those present in their scene again (the default)"
    )
    add_common(heard)
    heard.set_defaults(run=run_heard_by)


def _time(text: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(
            f"--at: {text!r} is not an ISO time (such as 2026-03-07T19:30:00Z).", field="--at"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _line_ids(lines: list[str]) -> list[int]:
    ids = []
    for line in lines:
        number = line.removeprefix("line:")
        if not number.isdigit():
            raise InvalidInputError(
                f"{line!r} is not a line: give line:ID as `session show` lists them.",
                field="lines",
            )
        ids.append(int(number))
    return ids


def _scene_row(number: int, scene: Scene) -> list[str]:
    heard = ", ".join(sorted(hearer for hearer, _ in scene.word))
    return [
        str(number),
        scene.started_at.strftime("%Y-%m-%d %H:%M:%S"),
        scene.location_id or "",
        ", ".join(scene.present) or "(players only)",
        scene.title or "",
        heard,
    ]


async def run_scenes(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        scenes = await session_scenes(desk, args.session)
    if args.json:
        emit(args, [scene.model_dump(mode="json") for scene in scenes], "")
        return 0
    if not scenes:
        print(
            f"Session {args.session!r} has no scenes: in a witnessed campaign its lines are "
            "heard by the NPCs who speak in it. Add one with `glyphoxa-mcp session scene "
            f"{args.session} --at TIME --present NPCS`."
        )
        return 0
    print_table(
        ["#", "started", "location", "present", "title", "heard of by"],
        [_scene_row(number, scene) for number, scene in enumerate(scenes, start=1)],
    )
    return 0


async def run_scene(args: argparse.Namespace) -> int:
    at = _time(args.at)
    async with campaign_desk(args) as desk:
        if args.remove:
            await remove_scene(desk, args.session, at)
            emit(args, {"removed": at.isoformat()}, f"Removed the scene at {at.isoformat()}.")
            return 0
        scene = await set_scene(
            desk,
            args.session,
            at,
            present=None if args.present is None else comma_separated(args.present),
            location=args.location,
            title=args.title,
        )
    emit(
        args,
        scene.model_dump(mode="json"),
        f"Scene at {scene.started_at.isoformat()}: "
        f"{', '.join(scene.present) or 'the players only'} present"
        + (f", at {scene.location_id}" if scene.location_id else "")
        + ". Its lines are heard again.",
    )
    return 0


async def run_heard_by(args: argparse.Namespace) -> int:
    ids = _line_ids(args.lines)
    npcs = None if args.scene else comma_separated(args.npcs)
    async with campaign_desk(args) as desk:
        heard = await set_line_hearers(desk, ids, npcs)
    emit(
        args,
        [
            {"line": h.entry.id, "heard_by": None if h.heard_by is None else list(h.heard_by)}
            for h in heard
        ],
        "\n".join(
            f"line:{h.entry.id} heard by "
            + (
                "every NPC (a shared campaign)"
                if h.heard_by is None
                else ", ".join(h.heard_by) or "no NPC"
            )
            for h in heard
        ),
    )
    return 0
