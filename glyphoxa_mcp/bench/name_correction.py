"""Name-correction latency per utterance, with a small and a large campaign's names.

The utterances are the synthetic transcript's own lines; in every other line that names an
entity, the name is misheard the way speech-to-text mishears names (split into ordinary
words, lower case), so the corrector has work to do and not only names to keep.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence

from glyphoxa_mcp.bench.dataset import Dataset
from glyphoxa_mcp.bench.operations import BenchContext
from glyphoxa_mcp.bench.timing import Call, Operation
from glyphoxa_mcp.correction.name_index import KnownName
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector

NAME_COUNTS = (50, 5000)
UTTERANCES = 2000
_VOWEL_THEN_CONSONANT = re.compile(r"[aeiouy][^aeiouy\s]", re.IGNORECASE)


def misheard(name: str) -> str:
    """ "Bransdric" -> "bran sdric"; "Red Kettle" -> "red kettle": how a transcriber that
    does not know the name writes it."""
    lowered = name.lower().replace("-", " ").replace("'", "")
    if " " in lowered or len(lowered) < 6:
        return lowered
    split = _VOWEL_THEN_CONSONANT.search(lowered, 2)
    if split is None or split.end() >= len(lowered) - 1:
        return lowered
    return f"{lowered[: split.end()]} {lowered[split.end() :]}"


def utterances(dataset: Dataset, count: int = UTTERANCES, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    names = {e.id: e.name for e in dataset.entities}
    lines = []
    for entry in dataset.entries[:count]:
        text = entry.text
        named = [names[i] for i in entry.mentions if i in names and names[i] in text]
        if named and rng.random() < 0.5:
            target = rng.choice(named)
            text = text.replace(target, misheard(target), 1)
        lines.append(text)
    return lines


def most_named(dataset: Dataset, count: int) -> list[KnownName]:
    """The `count` entities the transcript names most (a campaign's cast), names and
    aliases."""
    mentions = Counter(i for entry in dataset.entries for i in entry.mentions)
    ranked = sorted(dataset.entities, key=lambda e: (-mentions[e.id], e.id))[:count]
    return [KnownName(s, e.id) for e in ranked for s in (e.name, *e.aliases)]


def name_correction(context: BenchContext) -> list[Operation]:
    lines = utterances(context.dataset)
    operations = []
    for count in NAME_COUNTS:
        names = most_named(context.dataset, count)
        corrector = PhoneticCorrector(names)
        entities = len({n.entity_id for n in names})
        operations.append(
            Operation(f"name correction ({entities} entities)", _correcting(corrector, lines))
        )
    return operations


def _correcting(corrector: PhoneticCorrector, lines: Sequence[str]) -> Call:
    def correct(number: int) -> None:
        corrector.correct(lines[number % len(lines)])

    return correct
