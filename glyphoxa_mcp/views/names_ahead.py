"""Names read ahead: before a read checks texts for names hidden from its viewer, what the
database keeps of the names read in them is taught to the process (one statement for the
texts the process has not read); afterwards, what the process had to work out itself is
kept for the next process, a batch at a time (recall/names_read.py, sql/039).

Both are a cache's work: a database that does not answer costs the check its time, never
the call its answer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.errors import GlyphoxaError
from glyphoxa_mcp.recall.names_read import (
    has_read,
    learn,
    looked_up,
    names_digest,
    names_read,
    unread,
)
from glyphoxa_mcp.recall.redaction import Redactor
from glyphoxa_mcp.storage.memory import CampaignMemory

log = logging.getLogger(__name__)

# Texts worked out by this process before they are kept, in one statement.
KEEP_AT = 128
# The most waiting to be kept under one campaign's names: past it (a database that keeps
# refusing) the oldest go. And the most campaigns' names waiting at once (while names
# change, a process reads under the old and the new for a moment).
MOST_WAITING = 4_096
KINDS_WAITING = 8


@dataclass
class TextsToKeep:
    """Texts whose names a read had to work out: their readings under `corrector`."""

    corrector: PhoneticCorrector | None = None
    readings: list[tuple[bytes, str]] = field(default_factory=list)


async def read_ahead(
    memory: CampaignMemory, redactor: Redactor, texts: Iterable[str]
) -> TextsToKeep:
    """Teach the process what the database keeps of the names read in `texts` that it has
    neither read nor looked up; the rest, to pass to `keep_read` once they are checked."""
    corrector = redactor.corrector
    if corrector is None or not redactor.hidden_ids or not redactor.hides_anything:
        return TextsToKeep()
    missing = unread(corrector, texts)
    if not missing:
        return TextsToKeep()
    try:
        found = await memory.names_read.found(list(missing))
    except GlyphoxaError as exc:
        log.debug("names read in texts not looked up: %s", exc)
        found = {}
    looked_up(corrector, missing.values())
    for reading, entity_ids in found.items():
        learn(corrector, missing[reading], entity_ids)
    return TextsToKeep(
        corrector, [(reading, text) for reading, text in missing.items() if reading not in found]
    )


_WAITING: dict[tuple[str, bytes], list[tuple[bytes, tuple[str | None, ...]]]] = {}


async def keep_read(memory: CampaignMemory, worked_out: TextsToKeep) -> None:
    """Keep what the process worked out of the texts `read_ahead` did not find, once
    KEEP_AT of them (of this campaign and names) are waiting."""
    corrector = worked_out.corrector
    if corrector is None or not worked_out.readings:
        return
    names = names_digest(corrector)
    key = (memory.campaign_id, names)
    if key not in _WAITING and len(_WAITING) >= KINDS_WAITING:
        del _WAITING[next(iter(_WAITING))]  # the oldest names: most likely gone
    waiting = _WAITING.setdefault(key, [])
    waiting += [
        (reading, names_read(corrector, text))
        for reading, text in worked_out.readings
        if has_read(corrector, text)
    ]
    del waiting[:-MOST_WAITING]
    if len(waiting) < KEEP_AT:
        return
    batch = waiting[:]
    waiting.clear()
    try:
        await memory.names_read.keep(names, batch)
    except GlyphoxaError as exc:
        log.debug("names read in %d texts not kept: %s", len(batch), exc)
