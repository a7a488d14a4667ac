"""An extractive session summary, for when no LLM is configured. (pure)

It chooses the sentences that carry the session (those naming known entities, making
decisions, promises or revelations, and using the session's rarer words), keeps them in
the order they were said, and quotes them with their speaker: it never claims more than
was said. One line per moment, so a sentence naming a secret can be left out on its own.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_mcp.domain.models import Entry
from glyphoxa_mcp.recall.mentions import NamePattern

_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_WORD = re.compile(r"[a-z']+")
# Words that mark what a summary is for: decisions, promises, revelations, outcomes.
CUES = frozenset(
    _WORD.findall(
        "promise promised swear agree agreed deal decide decided will must never found "
        "reveal revealed secret reward pay paid owe owes killed died lost stolen truth "
        "plan"
    )
)
STOP = frozenset(
    _WORD.findall(
        "the a an and or but of to in on at for with is are was were be been it its this "
        "that i you he she we they me him her us them my your our their do did not no so "
        "if as by from have has had what who how why where when then there here just"
    )
)
MIN_WORDS = 4


@dataclass(frozen=True)
class Moment:
    speaker: str
    sentence: str
    order: int
    score: float


def _sentences(entries: Sequence[Entry]) -> list[tuple[str, str]]:
    """(speaker, sentence) in the order they were said, leaving out short ones."""
    found = []
    for entry in entries:
        for match in _SENTENCE.finditer(entry.text):
            sentence = match.group(0).strip()
            if len(sentence.split()) >= MIN_WORDS:
                found.append((entry.speaker_name, sentence))
    return found


def key_moments(entries: Sequence[Entry], known: NamePattern, limit: int = 6) -> list[Moment]:
    sentences = _sentences(entries)
    if not sentences:
        return []
    words = [[w for w in _WORD.findall(s.lower()) if w not in STOP] for _, s in sentences]
    frequency = Counter(w for ws in words for w in set(ws))
    count = len(sentences)
    scored = []
    for order, ((speaker, sentence), content) in enumerate(zip(sentences, words, strict=True)):
        rarity = sum(math.log((1 + count) / (1 + frequency[w])) for w in set(content))
        rarity /= max(len(content), 1)
        names = len(known.owners_in(sentence))
        cues = len(CUES.intersection(content))
        scored.append(Moment(speaker, sentence, order, 2.0 * names + 1.5 * cues + rarity))
    wanted = max(3, min(limit, round(count / 3)))
    chosen: list[Moment] = []
    for moment in sorted(scored, key=lambda m: (-m.score, m.order)):
        if len(chosen) == wanted:
            break
        if not any(_overlap(moment.sentence, other.sentence) > 0.6 for other in chosen):
            chosen.append(moment)
    return sorted(chosen, key=lambda m: m.order)


def _overlap(first: str, second: str) -> float:
    a, b = set(_WORD.findall(first.lower())), set(_WORD.findall(second.lower()))
    return len(a & b) / max(len(a | b), 1)


def extractive_summary(
    entries: Sequence[Entry], known: NamePattern, names_of: dict[str, str]
) -> str:
    """The summary text: who took part, then the key moments, one per line."""
    if not entries:
        return "Nothing was said in this session."
    speakers = list(dict.fromkeys(e.speaker_name for e in entries))
    mentioned = list(dict.fromkeys(known.owners_in(" ".join(e.text for e in entries))))
    lines = [f"Speaking: {', '.join(speakers)}."]
    others = [names_of[i] for i in mentioned if i in names_of and names_of[i] not in speakers]
    if others:
        lines.append(f"Mentioned: {', '.join(others)}.")
    for moment in key_moments(entries, known):
        lines.append(f"{moment.speaker}: \u201c{moment.sentence}\u201d")
    return "\n".join(lines)
