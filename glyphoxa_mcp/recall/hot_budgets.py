"""The hot layer: what goes into every prompt of an NPC, trimmed to token budgets. (pure)

Three parts, each with its own budget: who the NPC is (identity), what was just said (recent
transcript), and where it is (scene); and two an NPC may have: the facts of this session,
and the lore sections the DM pinned to it. Trimming drops the least relevant identity lines,
the oldest transcript lines, the least relevant scene lines and the last pinned lore first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, Field

# English averages about four characters per token for GPT- and Claude-style tokenizers.
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class HotBudgets(BaseModel):
    identity_tokens: int = Field(default=500, ge=50)
    transcript_tokens: int = Field(default=1500, ge=50)
    scene_tokens: int = Field(default=300, ge=50)
    session_facts_tokens: int = Field(default=200, ge=50)
    lore_tokens: int = Field(default=600, ge=50)
    transcript_minutes: float = Field(default=5.0, gt=0)


@dataclass(frozen=True)
class Line:
    """A line of text and how much it matters (higher is kept longer)."""

    text: str
    relevance: float


def fit_by_relevance(header: str, lines: Sequence[Line], budget: int) -> tuple[list[str], int]:
    """The header and the most relevant lines that fit, in their original order; and how many
    lines were left out."""
    remaining = budget - estimate_tokens(header)
    ranked = sorted(range(len(lines)), key=lambda i: (-lines[i].relevance, i))
    kept: set[int] = set()
    for index in ranked:
        cost = estimate_tokens(lines[index].text) + 1
        if cost <= remaining:
            kept.add(index)
            remaining -= cost
    return [lines[i].text for i in sorted(kept)], len(lines) - len(kept)


def fit_newest(lines: Sequence[str], budget: int) -> tuple[list[str], int]:
    """The newest lines that fit (lines are oldest first), and how many old ones were dropped."""
    kept: list[str] = []
    remaining = budget
    for text in reversed(lines):
        cost = estimate_tokens(text) + 1
        if cost > remaining:
            break
        kept.append(text)
        remaining -= cost
    return list(reversed(kept)), len(lines) - len(kept)


class TranscriptLine(BaseModel):
    speaker: str
    text: str
    spoken_at: datetime


class Section(BaseModel):
    text: str
    tokens: int
    budget: int
    dropped_lines: int = Field(description="Lines left out to stay within the budget.")


def section(header: str, lines: list[str], budget: int, dropped: int) -> Section:
    text = "\n".join([header, *lines] if header else lines)
    return Section(text=text, tokens=estimate_tokens(text), budget=budget, dropped_lines=dropped)


def render_prompt(
    npc_name: str,
    identity: Section,
    transcript: Section,
    scene: Section,
    session_facts: Section | None = None,
    lore: Section | None = None,
) -> str:
    parts = [f"## Who you are: {npc_name}\n{identity.text}"]
    if lore is not None and lore.text:
        parts.append(f"## What you know of the world\n{lore.text}")
    parts.append(f"## Where you are\n{scene.text}")
    if session_facts is not None and session_facts.text:
        # Temporary truths of tonight's session (a disguise, a truce) outrank the scene.
        parts.append(f"## This session\n{session_facts.text}")
    parts.append(f"## What was just said\n{transcript.text}")
    return "\n\n".join(parts)
