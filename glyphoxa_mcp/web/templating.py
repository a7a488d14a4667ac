"""The desk's HTML: Jinja2 templates (escaped by default) and the filters they use."""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

import jinja2
from starlette.templating import Jinja2Templates

from glyphoxa_mcp.domain.models import Visibility
from glyphoxa_mcp.domain.wording import counted

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"


def when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ""


def percent(confidence: float | None) -> str:
    return "" if confidence is None else f"{confidence:.0%}"


# A text box shows at least this many lines, to write in, and at most this many before it
# scrolls (the DM can drag it taller).
FEWEST_ROWS = 3
MOST_ROWS = 40


def text_rows(text: str | None, columns: int) -> int:
    """Lines a text box `columns` characters wide needs to show all of `text` and a line to
    write on, between FEWEST_ROWS and MOST_ROWS."""
    wrapped = sum(max(1, math.ceil(len(line) / columns)) for line in (text or "").split("\n"))
    return min(max(wrapped + 1, FEWEST_ROWS), MOST_ROWS)


def who_knows(visibility: Visibility, names: dict[str, str] | None = None) -> str:
    """'everyone', 'the DM only', or the NPCs who know it."""
    if visibility.known_by:
        named = names or {}
        return ", ".join(named.get(npc, npc) for npc in visibility.known_by)
    return "the DM only" if visibility.secret else "everyone"


def make_templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        # A name a template uses but no page passes is a fault to see in tests, not a blank.
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["percent"] = percent
    env.filters["who_knows"] = who_knows
    env.filters["text_rows"] = text_rows
    env.filters["counted"] = counted
    return Jinja2Templates(env=env)
