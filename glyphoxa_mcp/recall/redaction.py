"""Keep what an NPC may not know out of free text shown to it. (pure)

Transcripts and summaries are free text, so a secret can be spoken in them. For an NPC's
scope every sentence that names an entity hidden from that NPC (by name or alias) is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

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

    def redact_lines(self, text: str) -> tuple[str, int]:
        """Transcript text ('Speaker: words' per line) without every line that names something
        hidden, speaker included: a line is never kept in part, so nothing is left
        unattributed."""
        if not self.mentions_hidden(text):
            return text, 0
        lines = [line for line in text.splitlines() if line.strip()]
        kept = [line for line in lines if not self.mentions_hidden(line)]
        return "\n".join(kept), len(lines) - len(kept)

    def clean(self, value: Any) -> Any:
        """`value` (an attribute: text, number, list or mapping) without the parts that name
        something hidden; None when nothing is left."""
        if isinstance(value, str):
            return None if self.mentions_hidden(value) else value
        if isinstance(value, list):
            kept = [self.clean(item) for item in value]
            return [item for item in kept if item is not None]
        if isinstance(value, dict):
            cleaned = {key: self.clean(item) for key, item in value.items()}
            return {
                k: v for k, v in cleaned.items() if v is not None and not self.mentions_hidden(k)
            }
        return value


SHOW_EVERYTHING = Redactor(NamePattern.of_terms(()))
