"""A session summary written by an LLM, per scene: where and who, what happened, what was
decided, promised and revealed, and a gist for those who were not there.

Each scene is asked for on its own (a session without scenes is one scene); a scene too
long for one request is summarised a window at a time and the windows merged in a last
request. The text keeps one statement per line, so a line naming a secret can be redacted
on its own for an NPC who may not know it. An unusable reply yields None: the caller falls
back to the offline summary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field, ValidationError

from glyphoxa_mcp.domain.models import Entry
from glyphoxa_mcp.domain.scenes import Scene, scene_groups
from glyphoxa_mcp.domain.session_summaries import SummaryPart
from glyphoxa_mcp.providers.chat import ChatModel

LINES_PER_REQUEST = 300
SECTIONS = (("decided", "Decided"), ("promised", "Promised"), ("revealed", "Revealed"))
SHAPE = """{"where_and_who": "<one sentence: where the scene is and who took part>",
"happened": "<2-5 sentences of what happened>", "decided": [], "promised": [],
"revealed": [], "gist": "<one sentence of what the scene was about, as someone who was not
there would hear of it, quoting no one>"}"""
SYSTEM_PROMPT = f"""\
You summarise one scene of a tabletop RPG session for the game master and the NPCs' memory.
Use only what the transcript says. Write short third-person sentences with the names as
spelled in the transcript; do not quote the lines. Reply with a JSON object: {SHAPE}, each
list holding one short sentence per item (empty when there is none)."""
MERGE_PROMPT = f"""\
You merge partial summaries of one scene of a tabletop RPG session, in order, into one. Use
only what they say. Reply with the same JSON object shape: {SHAPE}."""


class SceneSummary(BaseModel):
    where_and_who: str = ""
    happened: str = Field(min_length=1)
    decided: list[str] = Field(default_factory=list)
    promised: list[str] = Field(default_factory=list)
    revealed: list[str] = Field(default_factory=list)
    gist: str = Field(min_length=1)

    def text(self) -> str:
        lines = [s for s in (self.where_and_who.strip(), self.happened.strip()) if s]
        for key, title in SECTIONS:
            items = [i.strip() for i in getattr(self, key) if i and i.strip()]
            if items:
                lines.append(f"{title}:")
                lines += [f"- {item}" for item in items]
        return "\n".join(lines)


def _summary(reply: object) -> SceneSummary | None:
    try:
        summary = SceneSummary.model_validate(reply)
    except ValidationError:
        return None
    return summary if summary.happened.strip() and summary.gist.strip() else None


def _scene_lines(
    entries: Sequence[Entry], scenes: Sequence[Scene]
) -> list[tuple[Scene | None, list[Entry]]]:
    """The lines of each scene in order, those outside any scene first (domain/scenes.py)."""
    groups = scene_groups(scenes, entries, lambda entry: entry.spoken_at)
    return [(scene, lines) for scene, lines in groups if lines]


def _setting(scene: Scene | None, names_of: dict[str, str]) -> dict[str, object]:
    if scene is None:
        return {}
    return {
        "location": names_of.get(scene.location_id, scene.location_id)
        if scene.location_id
        else None,
        "present": [names_of.get(i, i) for i in scene.present],
        "title": scene.title,
    }


async def llm_summary(
    chat: ChatModel,
    title: str,
    entries: Sequence[Entry],
    scenes: Sequence[Scene] = (),
    names_of: dict[str, str] | None = None,
) -> list[SummaryPart] | None:
    """One part per scene, or None when a reply is unusable."""
    if not entries:
        return None
    parts = []
    for scene, lines in _scene_lines(entries, scenes):
        summary = await _scene_summary(chat, title, lines, _setting(scene, names_of or {}))
        if summary is None:
            return None
        parts.append(
            SummaryPart(
                scene_started_at=scene.started_at if scene else None,
                text=summary.text(),
                gist=summary.gist.strip(),
            )
        )
    return parts


async def _scene_summary(
    chat: ChatModel, title: str, lines: Sequence[Entry], setting: dict[str, object]
) -> SceneSummary | None:
    windows: list[SceneSummary] = []
    for start in range(0, len(lines), LINES_PER_REQUEST):
        window = lines[start : start + LINES_PER_REQUEST]
        transcript = "\n".join(f"{e.speaker_name}: {e.text}" for e in window)
        request = json.dumps(
            {"session": title, "scene": setting, "transcript": transcript}, ensure_ascii=False
        )
        part = _summary(await chat.json_reply(SYSTEM_PROMPT, request))
        if part is None:
            return None
        windows.append(part)
    if len(windows) == 1:
        return windows[0]
    request = json.dumps(
        {"session": title, "scene": setting, "parts": [w.model_dump() for w in windows]},
        ensure_ascii=False,
    )
    return _summary(await chat.json_reply(MERGE_PROMPT, request))
