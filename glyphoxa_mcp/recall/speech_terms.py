"""The campaign's names as a speech-to-text keyword list. (pure)

The cheapest fix for a misheard name is the one made before transcription: speech-to-text
services take a list of terms to favour. Names and aliases go in once each, in the order
given (the caller puts the most spoken first), formatted for the service that reads them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Literal
from urllib.parse import urlencode

from glyphoxa_mcp.domain.models import Entity

SpeechFormat = Literal["plain", "json", "deepgram", "assemblyai"]
FORMATS: tuple[SpeechFormat, ...] = ("plain", "json", "deepgram", "assemblyai")
# Deepgram's keyterm prompting takes at most 100 terms a request.
DEEPGRAM_MAX_TERMS = 100
# AssemblyAI's word boost wants spoken words: no punctuation but apostrophes.
_NOT_SPOKEN = re.compile(r"[^\w\s']+")


def speech_terms(entities: Iterable[Entity]) -> list[str]:
    """Every name and alias once (case-insensitively), in the order of `entities`."""
    seen: set[str] = set()
    terms = []
    for entity in entities:
        for term in (entity.name, *entity.aliases):
            key = term.strip().casefold()
            if key and key not in seen:
                seen.add(key)
                terms.append(term.strip())
    return terms


def formatted(terms: list[str], style: SpeechFormat, campaign: str) -> str:
    """The terms as `style` wants them:
    - plain: one a line;
    - json: {"campaign": ..., "terms": [...]};
    - deepgram: the query string of Nova-3 keyterm prompting (keyterm=A&keyterm=B), the
      first 100;
    - assemblyai: {"word_boost": [...], "boost_param": "high"}, punctuation removed.
    """
    if style == "plain":
        return "\n".join(terms)
    if style == "json":
        return json.dumps({"campaign": campaign, "terms": terms})
    if style == "deepgram":
        return urlencode([("keyterm", term) for term in terms[:DEEPGRAM_MAX_TERMS]])
    spoken = [" ".join(_NOT_SPOKEN.sub(" ", term).split()) for term in terms]
    return json.dumps({"word_boost": [t for t in spoken if t], "boost_param": "high"})
