"""A session summary written by an LLM: what happened, decided, revealed, promised.

Long sessions are summarised a window at a time and the parts merged in a last request.
The summary keeps one statement per line, so a line naming a secret can be redacted on its
own for an NPC who may not know it. An unusable reply yields None: the caller falls back to
the extractive summary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field, ValidationError

from glyphoxa_mcp.domain.models import Entry
from glyphoxa_mcp.providers.chat import ChatModel

LINES_PER_REQUEST = 300
SECTIONS = (
    ("decisions", "Decisions"),
    ("revealed", "Revealed"),
    ("promises", "Promises"),
    ("outcomes", "Outcomes"),
)
SYSTEM_PROMPT = """\
You summarise a tabletop RPG session for the game master and the NPCs' memory. Use only
what the transcript says. Write plain sentences with the names as spelled in the transcript.
Reply with a JSON object: {"summary": "<3-6 sentences of what happened>", "decisions": [],
"revealed": [], "promises": [], "outcomes": []}, each list holding one short sentence per
item (empty when there is none)."""
MERGE_PROMPT = """\
You merge partial summaries of one tabletop RPG session, in order, into one. Use only what
they say. Reply with the same JSON object shape: {"summary": "", "decisions": [],
"revealed": [], "promises": [], "outcomes": []}."""


class SessionSummary(BaseModel):
    summary: str = Field(min_length=1)
    decisions: list[str] = Field(default_factory=list)
    revealed: list[str] = Field(default_factory=list)
    promises: list[str] = Field(default_factory=list)
    outcomes: list[str] = Field(default_factory=list)

    def text(self) -> str:
        lines = [self.summary.strip()]
        for key, title in SECTIONS:
            items = [i.strip() for i in getattr(self, key) if i and i.strip()]
            if items:
                lines.append(f"{title}:")
                lines += [f"- {item}" for item in items]
        return "\n".join(lines)


def _summary(reply: object) -> SessionSummary | None:
    try:
        return SessionSummary.model_validate(reply)
    except ValidationError:
        return None


async def llm_summary(chat: ChatModel, title: str, entries: Sequence[Entry]) -> str | None:
    if not entries:
        return None
    parts: list[SessionSummary] = []
    for start in range(0, len(entries), LINES_PER_REQUEST):
        lines = entries[start : start + LINES_PER_REQUEST]
        transcript = "\n".join(f"{e.speaker_name}: {e.text}" for e in lines)
        request = json.dumps({"session": title, "transcript": transcript}, ensure_ascii=False)
        part = _summary(await chat.json_reply(SYSTEM_PROMPT, request))
        if part is None:
            return None
        parts.append(part)
    if len(parts) == 1:
        return parts[0].text()
    request = json.dumps(
        {"session": title, "parts": [p.model_dump() for p in parts]}, ensure_ascii=False
    )
    merged = _summary(await chat.json_reply(MERGE_PROMPT, request))
    return merged.text() if merged else None
