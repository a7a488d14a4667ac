"""Stage 2 of name correction: an LLM looks at what the phonetic stage could not settle.

Only uncertain spans go to the model: words speech-to-text heard with confidence under 0.5,
or, without confidences, entity-like words (capitalised mid-sentence, or not everyday
English) that the phonetic stage did not fix. The model answers in JSON with the corrected
line and the corrections it made; a verify step keeps only declared changes, inside an
uncertain span, to a known name, and reverts everything else. A reply that is not such JSON
leaves the line as it was.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from glyphoxa_mcp.correction.english import FUNCTION_WORDS, per_million
from glyphoxa_mcp.correction.name_index import NameIndex
from glyphoxa_mcp.correction.spans import apply_corrections, corrected_offset, raw_offset
from glyphoxa_mcp.correction.words import letters, segments
from glyphoxa_mcp.domain.models import TextCorrection, Word
from glyphoxa_mcp.providers.chat import ChatModel

_TOKENS = re.compile(r"\S+|\s+")
_EDGE = " \t\n.,;:!?\"'()[]{}-\u2014\u2013\u2018\u2019\u201c\u201d"
_POSSESSIVE = re.compile(r"['\u2019]s$")
SYSTEM_PROMPT = """\
You repair fantasy names that speech-to-text misheard in one line of a tabletop RPG session.
You get the line, the uncertain spans in it, and the names of the campaign.
Replace an uncertain span only when it is clearly a mishearing of one of the listed names,
and only with that name, spelled exactly as listed. Change nothing else: not other words,
not punctuation, not casing. If unsure, change nothing.
Reply with a JSON object: {"corrected": "<the whole line>", "corrections":
[{"heard": "<the exact text of the span you replaced>", "entity": "<the listed name>"}]}"""


class LLMCorrectionSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    low_confidence: float = Field(0.5, ge=0, le=1, description="Words below this are uncertain.")
    names_per_span: int = Field(10, ge=1, description="Sound-alike names offered per span.")
    all_names_up_to: int = Field(
        60, ge=0, description="Campaigns with at most this many names offer them all."
    )
    common_word_per_million: float = Field(0.6, ge=0)


@dataclass(frozen=True)
class Span:
    start: int
    end: int


class _Declared(BaseModel):
    heard: str
    entity: str


class _Reply(BaseModel):
    corrected: str
    corrections: list[_Declared]


def uncertain_spans(
    raw: str,
    words: Sequence[Word] | None,
    fixed: Sequence[TextCorrection],
    settings: LLMCorrectionSettings,
) -> list[Span]:
    """The spans of raw text worth asking about, outside what the phonetic stage fixed."""
    if words:
        marked = _low_confidence(raw, words, settings.low_confidence)
    else:
        marked = _entity_like(raw, settings.common_word_per_million)
    spans: list[Span] = []
    for start, end in marked:
        if any(start < c.end and c.start < end for c in fixed):
            continue
        if spans and not raw[spans[-1].end : start].strip():
            spans[-1] = Span(spans[-1].start, end)
        else:
            spans.append(Span(start, end))
    return [
        s
        for s in spans
        if not all(w.casefold() in FUNCTION_WORDS for w in raw[s.start : s.end].split())
    ]


def _low_confidence(raw: str, words: Sequence[Word], floor: float) -> list[tuple[int, int]]:
    marked = []
    cursor = 0
    lowered = raw.casefold()
    for word in words:
        bare = word.word.strip(_EDGE).casefold()
        if not bare:
            continue
        found = lowered.find(bare, cursor)
        if found < 0:
            continue
        cursor = found + len(bare)
        if word.confidence < floor:
            marked.append((found, cursor))
    return marked


def _entity_like(raw: str, common_per_million: float) -> list[tuple[int, int]]:
    marked = []
    for run in segments(raw):
        for word in run:
            capitalised = word.text[:1].isupper() and not _starts_sentence(raw, word.start)
            rare = word.lowered not in FUNCTION_WORDS and per_million(word.text) < (
                common_per_million
            )
            if capitalised or rare:
                marked.append((word.start, word.end))
    return marked


def _starts_sentence(raw: str, start: int) -> bool:
    before = raw[:start].rstrip()
    return not before or before[-1] in '.!?"\u201c'


def prompt(text: str, spans: Sequence[Span], names: Sequence[str]) -> str:
    return json.dumps(
        {
            "line": text,
            "uncertain_spans": [text[s.start : s.end] for s in spans],
            "names": list(names),
        },
        ensure_ascii=False,
    )


def verified(
    text: str, reply: object, spans: Sequence[Span], names: set[str]
) -> list[tuple[int, int, str]]:
    """The reply's changes that it declared, inside an uncertain span, to a known name, as
    (start, end, name) in `text`; everything else the reply changed is reverted."""
    try:
        parsed = _Reply.model_validate(reply)
    except ValidationError:
        return []
    declared = {(d.heard.strip(), d.entity.strip()) for d in parsed.corrections}
    accepted = []
    for start, end, replacement in _changed_regions(text, parsed.corrected):
        start, end, replacement = _trimmed(text, start, end, replacement)
        heard = text[start:end]
        if (
            (heard, replacement) in declared
            and replacement in names
            and any(s.start <= start and end <= s.end for s in spans)
        ):
            accepted.append((start, end, replacement))
    return accepted


def _changed_regions(before: str, after: str) -> list[tuple[int, int, str]]:
    a, b = _TOKENS.findall(before), _TOKENS.findall(after)
    a_at, b_at = _offsets(a), _offsets(b)
    regions: list[list[int]] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        region = [a_at[i1], a_at[i2], b_at[j1], b_at[j2]]
        if regions:
            gap_a = before[regions[-1][1] : region[0]]
            gap_b = after[regions[-1][3] : region[2]]
            if gap_a.isspace() and gap_a == gap_b:
                regions[-1][1], regions[-1][3] = region[1], region[3]
                continue
        regions.append(region)
    return [(r[0], r[1], after[r[2] : r[3]]) for r in regions]


def _offsets(tokens: list[str]) -> list[int]:
    offsets, position = [], 0
    for token in tokens:
        offsets.append(position)
        position += len(token)
    offsets.append(position)
    return offsets


def _trimmed(text: str, start: int, end: int, replacement: str) -> tuple[int, int, str]:
    while start < end and text[start] in _EDGE:
        start += 1
    while end > start and text[end - 1] in _EDGE:
        end -= 1
    replacement = replacement.strip(_EDGE)
    if _POSSESSIVE.search(text[start:end]) and _POSSESSIVE.search(replacement):
        end -= 2
        replacement = replacement[:-2]
    return start, end, replacement


class LLMNameCorrector:
    def __init__(self, chat: ChatModel, settings: LLMCorrectionSettings | None = None) -> None:
        self.chat = chat
        self.settings = settings or LLMCorrectionSettings()

    async def correct(
        self,
        raw: str,
        words: Sequence[Word] | None,
        phonetic: Sequence[TextCorrection],
        index: NameIndex,
    ) -> tuple[TextCorrection, ...]:
        """Stage-2 corrections of `raw` (spans of raw text), given the phonetic stage's."""
        raw_spans = uncertain_spans(raw, words, phonetic, self.settings)
        if not raw_spans or not len(index):
            return ()
        text = apply_corrections(raw, phonetic)
        spans = [
            Span(corrected_offset(phonetic, s.start), corrected_offset(phonetic, s.end))
            for s in raw_spans
        ]
        names = self._offered(text, spans, index)
        reply = await self.chat.json_reply(SYSTEM_PROMPT, prompt(text, spans, names))
        ids = {n.name.text: n.name.entity_id for n in index.names}
        corrections = []
        for start, end, name in verified(text, reply, spans, set(names)):
            raw_start, raw_end = raw_offset(phonetic, start), raw_offset(phonetic, end)
            corrections.append(
                TextCorrection(
                    start=raw_start,
                    end=raw_end,
                    heard=raw[raw_start:raw_end],
                    entity=name,
                    entity_id=ids.get(name),
                    stage="llm",
                )
            )
        return tuple(corrections)

    def _offered(self, text: str, spans: Sequence[Span], index: NameIndex) -> list[str]:
        if len(index) <= self.settings.all_names_up_to:
            return list(dict.fromkeys(n.name.text for n in index.names))
        offered: dict[str, None] = {}
        for span in spans:
            for name, _ in index.similar(letters(text[span.start : span.end]), 0.4)[
                : self.settings.names_per_span
            ]:
                offered[name.name.text] = None
        return list(offered)
