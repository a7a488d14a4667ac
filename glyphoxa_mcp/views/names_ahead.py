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
    not_asked,
    unread,
)
from glyphoxa_mcp.recall.redaction import Redactor
from glyphoxa_mcp.storage.memory import CampaignMemory

log = logging.getLogger(__name__)

# Texts worked out by this process before they are kept, in one statement.
KEEP_AT = 128
# The most waiting to be kept under one campaign's names: past it (a database that keeps
# refusing) the oldest go. And the most names waiting at once: a campaign's names before
# (while names change, a process reads under the old and the new for a moment) go first,
# then the names least recently used.
MOST_WAITING = 4_096
KINDS_WAITING = 16


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
    asking = not_asked(corrector, missing)
    found: dict[bytes, tuple[str | None, ...]] = {}
    if asking:
        try:
            found = await memory.names_read.found(list(asking))
        except GlyphoxaError as exc:
            log.debug("names read in texts not looked up: %s", exc)
        looked_up(corrector, asking.values())
    for reading, entity_ids in found.items():
        learn(corrector, missing[reading], entity_ids)
    # A text asked for before and not worked out then (withheld before correction ran) is
    # kept by the call that works it out.
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
    if key not in _WAITING:
        # Under the campaign's names before, rather than another campaign's names now.
        older = [k for k in _WAITING if k[0] == memory.campaign_id]
        while len(_WAITING) >= KINDS_WAITING:
            del _WAITING[older.pop(0) if older else next(iter(_WAITING))]
    waiting = _WAITING.pop(key, [])
    _WAITING[key] = waiting  # the most recently used last
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
