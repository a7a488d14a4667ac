"""A session's summary in parts, one per scene: what the DM reads is the parts joined.

Each part says where and who, then what happened, what was decided, promised and revealed
(`text`), and in one sentence what it was about (`gist`): what someone who was not there
may have heard of it, so the gist never quotes a line. A session without scenes is one part
whose `scene_started_at` is None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import AwareDatetime, StringConstraints

from glyphoxa_mcp.domain.models import Frozen

PART_SEPARATOR = "\n\n"
PartText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=8000)]


class SummaryPart(Frozen):
    scene_started_at: AwareDatetime | None = None
    text: PartText
    gist: PartText


def render_summary(parts: Sequence[SummaryPart]) -> str:
    """The session's summary as the DM reads it: each scene's part, in order, a blank line
    between them."""
    return PART_SEPARATOR.join(part.text for part in parts)
