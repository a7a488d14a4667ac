"""Reading the names in every line (as redaction reads it: speaker and words) and in every
current fact and its story label of a campaign once, under its names now, and keeping what
was read (recall/names_read.py, sql/039): what a server that has served the campaign a while
has kept already, so that an NPC's search waits for no name correction of those texts
(passages without lines, lore and attributes are read as before). What was read under names
the campaign no longer has is dropped."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.recall.names_read import names_digest, names_read, reading_of, spoken
from glyphoxa_mcp.storage.memory import CampaignMemory

# Rows read, and texts looked up and kept, at a time.
PAGE = 2_000


@dataclass(frozen=True)
class AllNamesRead:
    texts: int
    # Read now; the rest were kept already.
    worked_out: int
    # Rows of names the campaign no longer has.
    forgotten: int


async def read_all_names(memory: CampaignMemory) -> AllNamesRead:
    """Read and keep the names in the campaign's texts not read under its names yet."""
    names = await memory.entity_names()
    corrector = SHARED_CORRECTORS.for_entities(names.entities)
    digest = names_digest(corrector)
    texts = worked_out = 0
    async for page in _pages(memory):
        readings = {reading_of(digest, text): text for text in page if text}
        kept = await memory.names_read.found(list(readings))
        missing = [(r, t) for r, t in readings.items() if r not in kept]
        texts += len(readings)
        worked_out += len(missing)
        await memory.names_read.keep(digest, await _read(corrector, missing))
    forgotten = await memory.names_read.forget_all_but(digest)
    return AllNamesRead(texts, worked_out, forgotten)


async def _read(
    corrector: PhoneticCorrector, missing: list[tuple[bytes, str]]
) -> list[tuple[bytes, tuple[str | None, ...]]]:
    read = []
    for reading, text in missing:
        read.append((reading, names_read(corrector, text)))
        await anyio.lowlevel.checkpoint()  # seconds of work for a page: others may run
    return read


async def _pages(memory: CampaignMemory) -> AsyncIterator[list[str]]:
    """The texts redaction reads in the campaign, a page at a time: lines as spoken, then
    facts and their story labels."""
    stored, after = memory.names_read, 0
    while lines := await stored.lines_after(after, PAGE):
        after = lines[-1][0]
        yield [spoken(speaker, text) for _, speaker, text in lines]
    after = 0
    while facts := await stored.facts_after(after, PAGE):
        after = facts[-1][0]
        yield [text for _, fact, label in facts for text in (fact, label or "")]
