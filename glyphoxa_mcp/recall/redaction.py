"""Keep what a viewer may not know out of the free text shown to it. (pure)

Transcripts, summaries, titles and fact text are free text, so a secret can be said in them
in many forms. One rule decides for all of them: a line (or, in prose, a sentence) that
names an entity hidden from the viewer is withheld whole. It names one when it holds

- the entity's name or an alias, in any case, spaced, hyphenated or run together ("Salt
  Knives", "salt-knives", "SaltKnives"), possessive or not;
- one of them with its last word inflected ("a Salt Knife", "the Salt Knifes"), unless the
  name is a single everyday word ("Ash" is hidden, "the ashes" are not);
- a misspelling that name correction would put back to it ("the Sault Knives"): what
  correction recognises when a line is stored, redaction recognises when it is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from glyphoxa_mcp.correction.english import per_million
from glyphoxa_mcp.correction.known_names import corrects_like
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.correction.words import letters, segments

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_NAME_WORDS = re.compile(r"[^\W_]+")
# A single-word name this common in speech is also an ordinary word: its plural is not it.
EVERYDAY_WORD_PER_MILLION = 0.6
MIN_INFLECTED_CHARS = 3
# Texts already judged per redactor: the hot context and searches read the same lines again.
CHECKED_TEXTS = 16_384


def singulars(word: str) -> set[str]:
    """English singulars a plural might come from: knives -> knife, knive; stories -> story."""
    forms = set()
    if word.endswith("ves"):
        forms |= {word[:-3] + "f", word[:-3] + "fe"}
    if word.endswith("ies"):
        forms.add(word[:-3] + "y")
    if word.endswith("es"):
        forms.add(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        forms.add(word[:-1])
    return forms


def plurals(word: str) -> set[str]:
    """English plurals of a word: knife -> knives, knifes; story -> stories."""
    forms = {word + "s", word + "es"}
    if word.endswith("y"):
        forms.add(word[:-1] + "ies")
    if word.endswith("fe"):
        forms.add(word[:-2] + "ves")
    elif word.endswith("f"):
        forms.add(word[:-1] + "ves")
    return forms


def inflections(word: str) -> set[str]:
    """The word, its singulars and the plurals of all of them (lower case)."""
    bases = {word} | singulars(word)
    return bases | {plural for base in bases for plural in plurals(base)}


@dataclass(frozen=True)
class HiddenForms:
    """The forms of hidden names, found in text by their letters alone: any window of up to
    `max_words` consecutive words whose letters (case, spaces, hyphens and apostrophes
    aside) spell one of `keys` is a mention."""

    keys: frozenset[str]
    max_words: int
    longest: int
    # How many of the names give each key, and how many names have each number of words:
    # what `changed` needs to drop a name's forms without the other names'.
    _key_counts: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)
    _word_counts: Mapping[int, int] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, names: Iterable[str]) -> HiddenForms:
        return EMPTY_FORMS.changed((), names)

    def changed(self, removed: Iterable[str], added: Iterable[str]) -> HiddenForms:
        """These forms without those of the `removed` names (given before) and with those
        of the `added` ones: the cost is that of the names changed, not of all of them."""
        key_counts = dict(self._key_counts)
        word_counts = dict(self._word_counts)
        for names, step in ((removed, -1), (added, 1)):
            for name in names:
                forms = _forms_of(name)
                if forms is None:
                    continue
                keys, words = forms
                word_counts[words] = word_counts.get(words, 0) + step
                for key in keys:
                    key_counts[key] = key_counts.get(key, 0) + step
        key_counts = {key: count for key, count in key_counts.items() if count > 0}
        word_counts = {words: count for words, count in word_counts.items() if count > 0}
        return HiddenForms(
            frozenset(key_counts),
            max(word_counts, default=0),
            max(map(len, key_counts), default=0),
            key_counts,
            word_counts,
        )

    def found_in(self, text: str) -> bool:
        if not self.keys:
            return False
        for run in segments(text):
            for start in range(len(run)):
                key = ""
                for word in run[start : start + self.max_words]:
                    key += word.key
                    if len(key) > self.longest:
                        break
                    if key in self.keys:
                        return True
        return False


def _forms_of(name: str) -> tuple[set[str], int] | None:
    """The keys a name is found by, and its number of words; None for no name at all."""
    words = [w.casefold() for w in _NAME_WORDS.findall(name)]
    if not words or len(letters(name)) < 2:
        return None
    last = words[-1]
    inflect = len(last) >= MIN_INFLECTED_CHARS and not (
        len(words) == 1 and per_million(last) >= EVERYDAY_WORD_PER_MILLION
    )
    forms = inflections(last) if inflect else {last}
    keys = {letters("".join(words[:-1]) + form) for form in forms}
    return keys, len(words)


EMPTY_FORMS = HiddenForms(frozenset(), 0, 0)
# What each corrector corrects a text to (the entities), shared by every redactor that uses
# it: after a secret changes, every viewer's redactor is new but the corrector is the same,
# and correcting the hundreds of lines a hot context reads again would take most of a FAST
# call's time (issue 17).
_CORRECTED: WeakKeyDictionary[PhoneticCorrector, dict[str, frozenset[str | None]]] = (
    WeakKeyDictionary()
)


def corrected_ids(corrector: PhoneticCorrector, text: str) -> frozenset[str | None]:
    """The entities `corrector` would put names of into `text`."""
    known = _CORRECTED.get(corrector)
    if known is None:
        known = _CORRECTED[corrector] = {}
    ids = known.get(text)
    if ids is None:
        parent = corrects_like(corrector, text)
        before = None if parent is None else _CORRECTED.get(parent, {}).get(text)
        if before is not None:
            ids = before
        else:
            ids = frozenset(c.entity_id for c in corrector.correct(text).corrections)
        if len(known) >= CHECKED_TEXTS:
            known.clear()
        known[text] = ids
    return ids


@dataclass(frozen=True)
class Redactor:
    """What one viewer may not read: the forms of the names hidden from it and, to find
    their misspellings, the corrector of all the campaign's names with the hidden ids."""

    forms: HiddenForms
    corrector: PhoneticCorrector | None = None
    hidden_ids: frozenset[str] = frozenset()
    _checked: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def hiding(
        cls,
        names: Iterable[str],
        corrector: PhoneticCorrector | None = None,
        hidden_ids: Iterable[str] = (),
    ) -> Redactor:
        return cls(HiddenForms.of(names), corrector, frozenset(hidden_ids))

    @property
    def hides_anything(self) -> bool:
        return bool(self.forms.keys)

    def mentions_hidden(self, text: str) -> bool:
        if not self.forms.keys or not text:
            return False
        known = self._checked.get(text)
        if known is None:
            known = self._mentions(text)
            if len(self._checked) >= CHECKED_TEXTS:
                self._checked.clear()
            self._checked[text] = known
        return known

    def _mentions(self, text: str) -> bool:
        if self.forms.found_in(text):
            return True
        if self.corrector is None or not self.hidden_ids:
            return False
        return not self.hidden_ids.isdisjoint(corrected_ids(self.corrector, text))

    def redact(self, text: str) -> str:
        """Prose without the sentences that name something hidden."""
        if not self.mentions_hidden(text):
            return text
        sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
        return " ".join(s for s in sentences if not self.mentions_hidden(s))

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


SHOW_EVERYTHING = Redactor(EMPTY_FORMS)
