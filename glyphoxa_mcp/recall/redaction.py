"""Keep what a viewer may not know out of the free text shown to it. (pure)

Transcripts, summaries, titles and fact text are free text, so a secret can be said in them
in many forms. One rule decides for all of them: a line (or, in prose, a sentence) that
names an entity hidden from the viewer is withheld whole. Text and names are read alike
(name_spelling.py: look-alike letters, invisible characters, accents and case aside), and a
line names one when it holds

- the entity's name or an alias with anything or nothing between its words ("Salt Knives",
  "salt-knives", "SaltKnives", "Salt_Knives", "*Salt* *Knives*"), possessive or not, alone
  or in a compound ("anti-salt-knives", "SaltKnivesGang"), or spelled letter by letter
  ("S.a.l.t K.n.i.v.e.s");
- one of them with its last word inflected ("a Salt Knife", "the Salt Knifes"), unless the
  name is a single everyday word ("Ash" is hidden, "the ashes" are not);
- a misspelling that name correction would put back to it ("the Sault Knives"), or a form
  of a person's name it knows, spelled right or not (his given name or surname alone, or
  after a title: "Kazimir", "Lady Vale" for Lady Seraphine Vale): what correction
  recognises when a line is stored, redaction recognises when it is read;
- the start or the end of a name whose other part ends the line before or starts the line
  after (`mentions_hidden_across`, asked by whoever shows lines in their order).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glyphoxa_mcp.correction.english import per_million
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.recall.name_spelling import (
    NameWord,
    blurred,
    leet_words,
    name_words,
    runs_from,
    unescaped,
)
from glyphoxa_mcp.recall.names_read import names_read, remembered

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# A single-word name this common in speech is also an ordinary word: its plural is not it.
EVERYDAY_WORD_PER_MILLION = 0.6
MIN_INFLECTED_CHARS = 3
# A key this long found inside a longer word is a mention: a run-together compound
# ("saltknivesden"), where a shorter one is as likely an ordinary word ("ash" in "crash").
INSIDE_WORD_CHARS = 8
# The fewest letters a name must have to be looked for in a text read another way: shorter
# ones turn up by chance ("Em" in "me" backwards).
BACKWARDS_CHARS = 6
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
    """The forms of hidden names, found in text by their letters alone (name_spelling.py
    reads both): a run of consecutive words whose letters spell a key is a mention when it
    takes no more words than the name has parts (`words_of`: "Salt Knives", "SaltKnives"
    and "Salt_Knives" all spell "Salt Knives", while "a very" does not spell "Avery"); so
    is a key of `INSIDE_WORD_CHARS` letters or more inside a longer word
    ("thesaltknivesgang")."""

    words_of: Mapping[str, int]
    """Each key, and the most words a run spelling it may take."""
    longest: int
    # How many names give each (key, words): what `changed` needs to drop a name's forms
    # without the other names'.
    _counts: Mapping[tuple[str, int], int] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, names: Iterable[str]) -> HiddenForms:
        return EMPTY_FORMS.changed((), names)

    def changed(self, removed: Iterable[str], added: Iterable[str]) -> HiddenForms:
        """These forms without those of the `removed` names (given before) and with those
        of the `added` ones: the cost is that of the names changed, not of all of them."""
        counts = dict(self._counts)
        for names, step in ((removed, -1), (added, 1)):
            for name in names:
                forms = _forms_of(name)
                if forms is None:
                    continue
                keys, words = forms
                for key in keys:
                    counts[key, words] = counts.get((key, words), 0) + step
        counts = {form: count for form, count in counts.items() if count > 0}
        words_of: dict[str, int] = {}
        for key, words in counts:
            words_of[key] = max(words, words_of.get(key, 0))
        return HiddenForms(words_of, max(map(len, words_of), default=0), counts)

    @functools.cached_property
    def _blurred(self) -> HiddenForms:
        """These forms with their "i"s read as "l"s, to be found in a leet reading."""
        words_of: dict[str, int] = {}
        for key, words in self.words_of.items():
            words_of[blurred(key)] = max(words, words_of.get(blurred(key), 0))
        return HiddenForms(words_of, self.longest)

    @functools.cached_property
    def _long(self) -> HiddenForms:
        """The forms of BACKWARDS_CHARS letters or more that are no English word backwards."""
        words_of = {
            key: words
            for key, words in self.words_of.items()
            if len(key) >= BACKWARDS_CHARS and per_million(key[::-1]) < EVERYDAY_WORD_PER_MILLION
        }
        return HiddenForms(words_of, self.longest)

    def long_found_in(self, text: str) -> bool:
        """Whether a long form (`_long`) is in `text`: what a text read backwards is checked
        for, where a short name would turn up by chance ("Ron" in "nor")."""
        return self._long.found_in(text)

    def found_read_as_leet(self, text: str) -> bool:
        """Whether a hidden name is written in `text` with digits or symbols for letters:
        a run of its leet reading that spells a form (its "i"s as "l"s) and holds a word
        written with them among letters ("Sa1t", "KN1V35"; not "130" for Leo, nor "Ha!")."""
        read = leet_words(text) if self.words_of else None
        if not read:
            return False
        return self._blurred._found(
            [leet.word for leet in read], holding=[leet.signed for leet in read]
        )

    @functools.cached_property
    def _inside_lengths(self) -> tuple[int, ...]:
        return tuple(sorted({len(k) for k in self.words_of if len(k) >= INSIDE_WORD_CHARS}))

    def found_in(self, text: str) -> bool:
        return bool(self.words_of) and self._found(name_words(text))

    def found_across(self, before: str, after: str) -> bool:
        """Whether a hidden name starts at the end of `before` and ends at the start of
        `after` (a name split across two lines: "...called the Salt" / "Knives, mind")."""
        if not self.words_of:
            return False
        tail = _edge(name_words(before)[::-1], self.longest)[::-1]
        head = _edge(name_words(after), self.longest)
        if not tail or not head:
            return False
        # A line's end parts nothing: a name cut mid-word ("Ven" / "nacht") is one word.
        head[0] = NameWord(head[0].letters, spaced=False)
        return self._found(tail + head, crossing=len(tail))

    def _found(
        self, words: list[NameWord], crossing: int = 0, holding: Sequence[bool] | None = None
    ) -> bool:
        """Whether a run of `words` spells a key; with `crossing`, only runs that start
        before that index and end at or after it; with `holding`, only runs that hold a
        word marked in it (and no key inside a longer word)."""
        words_of = self.words_of
        for start in range(crossing or len(words)):
            for end, key, taken in runs_from(words, start, self.longest):
                if (
                    end >= crossing
                    and taken <= words_of.get(key, 0)
                    and (holding is None or any(holding[start : end + 1]))
                ):
                    return True
        if crossing or holding is not None or not self._inside_lengths:
            return False
        return any(self._inside(joined) for joined in _compounds(words))

    def _inside(self, word: str) -> bool:
        words_of = self.words_of
        for length in self._inside_lengths:
            if length >= len(word):
                break
            for start in range(len(word) - length + 1):
                if word[start : start + length] in words_of:
                    return True
        return False


def _compounds(words: list[NameWord]) -> Iterator[str]:
    """The letters of each run of words nothing but letters' case or punctuation parts
    ("SaltKnivesgang", "the-salt-knives-run"), longer than INSIDE_WORD_CHARS."""
    joined = ""
    for word in words:
        if word.spaced and len(joined) > INSIDE_WORD_CHARS:
            yield joined
        joined = word.letters if word.spaced else joined + word.letters
    if len(joined) > INSIDE_WORD_CHARS:
        yield joined


def _edge(words: list[NameWord], letters_wanted: int) -> list[NameWord]:
    """The first words of `words` that hold `letters_wanted` letters between them."""
    taken: list[NameWord] = []
    total = 0
    for word in words:
        if total >= letters_wanted:
            break
        taken.append(word)
        total += len(word.letters)
    return taken


def _forms_of(name: str) -> tuple[set[str], int] | None:
    """The keys a name is found by, and how many words a run spelling it may take (its
    parts: "SaltKnives" may be written "Salt Knives"); None for no name at all."""
    words = [word.letters for word in name_words(name)]
    if not words or len("".join(words)) < 2:
        return None
    last = words[-1]
    inflect = len(last) >= MIN_INFLECTED_CHARS and not (
        len(words) == 1 and per_million(last) >= EVERYDAY_WORD_PER_MILLION
    )
    forms = inflections(last) if inflect else {last}
    return {"".join(words[:-1]) + form for form in forms}, len(words)


EMPTY_FORMS = HiddenForms({}, 0)


@dataclass(frozen=True)
class Redactor:
    """What one viewer may not read: the forms of the names hidden from it and, to find
    their misspellings, the corrector of all the campaign's names with the hidden ids."""

    forms: HiddenForms
    corrector: PhoneticCorrector | None = None
    hidden_ids: frozenset[str] = frozenset()
    _checked: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)
    _checked_across: dict[tuple[str, str], bool] = field(
        default_factory=dict, compare=False, repr=False
    )

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
        return bool(self.forms.words_of)

    def mentions_hidden(self, text: str) -> bool:
        if not self.forms.words_of or not text:
            return False
        return remembered(self._checked, text, lambda: self._mentions(text), keep=CHECKED_TEXTS)

    def _mentions(self, text: str) -> bool:
        forms = self.forms
        if forms.found_in(text) or forms.found_read_as_leet(text):
            return True
        undone = unescaped(text)
        if undone is not None and forms.found_in(undone):
            return True
        if forms.long_found_in(text[::-1]):  # "sevinK tlaS"
            return True
        if self.corrector is None or not self.hidden_ids:
            return False
        return not self.hidden_ids.isdisjoint(names_read(self.corrector, text))

    def mentions_hidden_across(self, before: str, after: str) -> bool:
        """Whether a hidden name is split between `before` and the `after` that follows it."""
        if not self.forms.words_of or not before or not after:
            return False
        # Remembered like `mentions_hidden`: a hot context checks each pair of its last
        # minutes' lines at every read, and reading both lines' words is most of its time.
        return remembered(
            self._checked_across,
            (before, after),
            lambda: self.forms.found_across(before, after),
            keep=CHECKED_TEXTS,
        )

    def split_names(self, texts: Sequence[str]) -> list[bool]:
        """For texts read in this order (lines, sentences), which hold one side of a hidden
        name split between two of them: both sides are withheld."""
        split = [False] * len(texts)
        for at in range(1, len(texts)):
            if self.mentions_hidden_across(texts[at - 1], texts[at]):
                split[at - 1] = split[at] = True
        return split

    def redact(self, text: str) -> str:
        """Prose without the sentences that name something hidden."""
        # Punctuation does not part a name, so a name split between two sentences is found
        # in the whole text too.
        if not self.mentions_hidden(text):
            return text
        sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
        split = self.split_names(sentences)
        return " ".join(
            sentence
            for sentence, halved in zip(sentences, split, strict=True)
            if not halved and not self.mentions_hidden(sentence)
        )

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
