"""Keep what an NPC may not know out of free text shown to it. (pure)

Transcripts and summaries are free text, so a secret can be spoken in them. For an NPC's
scope every sentence that names an entity hidden from that NPC (by name or alias) is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from glyphoxa_mcp.recall.mentions import NamePattern

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class Redactor:
    hidden: NamePattern

    @classmethod
    def hiding(cls, terms: Iterable[str]) -> Redactor:
        return cls(NamePattern.of_terms((term, term) for term in terms))

    def mentions_hidden(self, text: str) -> bool:
        return self.hidden.found_in(text)

    def redact(self, text: str) -> tuple[str, int]:
        """The text without sentences that name something hidden, and how many were dropped."""
        if not self.mentions_hidden(text):
            return text, 0
        sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
        kept = [s for s in sentences if not self.mentions_hidden(s)]
        return " ".join(kept), len(sentences) - len(kept)


SHOW_EVERYTHING = Redactor(NamePattern.of_terms(()))
