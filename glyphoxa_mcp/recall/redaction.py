"""Keep what an NPC may not know out of free text shown to it. (pure)

Transcripts and summaries are free text, so a secret can be spoken in them. For an NPC's
scope every sentence that names an entity hidden from that NPC (by name or alias) is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class Redactor:
    pattern: re.Pattern[str] | None

    @classmethod
    def hiding(cls, terms: Iterable[str]) -> Redactor:
        cleaned = sorted({t.strip() for t in terms if len(t.strip()) >= 2}, key=len, reverse=True)
        if not cleaned:
            return cls(None)
        alternatives = "|".join(re.escape(term) for term in cleaned)
        return cls(re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE))

    def mentions_hidden(self, text: str) -> bool:
        return self.pattern is not None and self.pattern.search(text) is not None

    def redact(self, text: str) -> tuple[str, int]:
        """The text without sentences that name something hidden, and how many were dropped."""
        if not self.mentions_hidden(text):
            return text, 0
        sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
        kept = [s for s in sentences if not self.mentions_hidden(s)]
        return " ".join(kept), len(sentences) - len(kept)


SHOW_EVERYTHING = Redactor(None)
