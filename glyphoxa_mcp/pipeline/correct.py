"""Correcting a session's names before it is cut into passages, always from the raw text."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS, CorrectorCache
from glyphoxa_mcp.correction.llm_stage import LLMNameCorrector
from glyphoxa_mcp.correction.spans import apply_corrections, combined, phonetic_spans
from glyphoxa_mcp.domain.models import Entry, TextCorrection
from glyphoxa_mcp.errors import ProviderError
from glyphoxa_mcp.storage.memory import CampaignMemory

log = logging.getLogger(__name__)
# LLM requests in flight at once: enough to hide latency, few enough for rate limits.
LLM_CONCURRENCY = 4


@dataclass(frozen=True)
class CorrectionReport:
    entries: int
    changed: int
    names: int
    llm_failures: int = 0


async def correct_session(
    memory: CampaignMemory,
    session_id: str,
    correctors: CorrectorCache = SHARED_CORRECTORS,
    llm: LLMNameCorrector | None = None,
) -> CorrectionReport:
    """Stage 1 over every utterance of the session, then stage 2 with an LLM when one is
    given. Without one, earlier LLM corrections that the phonetic stage does not contradict
    are kept. Running it again changes nothing."""
    entries = await memory.log.entries(session_id)
    names = await memory.known_entities()
    corrector = correctors.for_entities(names)
    spans_of: dict[int, tuple[TextCorrection, ...]] = {}
    failures = 0

    async def correct(entry: Entry, limit: anyio.Semaphore) -> None:
        nonlocal failures
        phonetic = phonetic_spans(corrector.correct(entry.raw_text))
        if llm is None:
            spans_of[entry.id] = combined(phonetic, entry.corrections)
            return
        async with limit:
            try:
                asked = await llm.correct(entry.raw_text, entry.words, phonetic, corrector.index)
            except ProviderError as exc:
                # The line stays as the phonetic stage left it; the next run asks again.
                log.warning("LLM correction of entry %s failed: %s", entry.id, exc)
                failures += 1
                asked = ()
        spans_of[entry.id] = tuple(sorted([*phonetic, *asked], key=lambda c: c.start))

    limit = anyio.Semaphore(LLM_CONCURRENCY)
    if llm is None:
        # Nothing to wait for: a task per line would cost more than correcting it.
        for entry in entries:
            await correct(entry, limit)
    else:
        async with anyio.create_task_group() as group:
            for entry in entries:
                group.start_soon(correct, entry, limit)
    updates = [
        (entry.id, apply_corrections(entry.raw_text, spans_of[entry.id]), spans_of[entry.id])
        for entry in entries
        if _changed(entry, spans_of[entry.id])
    ]
    await memory.log.set_corrected(updates)
    return CorrectionReport(len(entries), len(updates), len(corrector.index), failures)


def _changed(entry: Entry, spans: tuple[TextCorrection, ...]) -> bool:
    return spans != entry.corrections or apply_corrections(entry.raw_text, spans) != entry.text
