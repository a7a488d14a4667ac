"""The secret check per line: what an NPC's every transcript line, passage and title costs
to judge for the names hidden from it, at the dataset's size.

The NPC is the bench's own, with the entities the dataset keeps from it (secret, or known
only to others) hidden; the lines are the synthetic transcript's, half of those that name
someone misheard (name_correction.py), so both halves of the check work: the spellings of
hidden names, and the corrector that finds their misspellings. Each timed call judges a
line no redactor has seen, as a line just recorded is.
"""

from __future__ import annotations

from glyphoxa_mcp.bench.name_correction import utterances
from glyphoxa_mcp.bench.operations import BenchContext
from glyphoxa_mcp.bench.timing import Call, Operation
from glyphoxa_mcp.correction.name_index import KnownName
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.recall.redaction import Redactor


def secret_check(context: BenchContext) -> list[Operation]:
    dataset = context.dataset
    npc = dataset.bench_npc
    hidden = [
        e
        for e in dataset.entities
        if e.id != npc and (npc not in e.known_by) and (e.secret or e.known_by)
    ]
    names = [KnownName(s, e.id) for e in dataset.entities for s in (e.name, *e.aliases)]
    corrector = PhoneticCorrector(names)
    spellings = [s for e in hidden for s in (e.name, *e.aliases)]
    redactor = Redactor.hiding(spellings, corrector, (e.id for e in hidden))
    lines = utterances(dataset)
    name = f"secret check per line ({len(dataset.entities)} entities, {len(hidden)} hidden)"
    return [Operation(name, _judging(redactor, lines))]


def _judging(redactor: Redactor, lines: list[str]) -> Call:
    def judge(number: int) -> None:
        # A new spelling of the line each call (a number after it), so no cache answers.
        redactor.mentions_hidden(f"{lines[number % len(lines)]} ({number})")

    return judge
