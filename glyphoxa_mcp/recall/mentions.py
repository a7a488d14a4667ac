"""Find which known entities a text names, by name or alias, as whole words. (pure)"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from glyphoxa_mcp.domain.models import Entity

MIN_TERM_CHARS = 2
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    term: str
    """Casefolded, as the owners are keyed."""


@dataclass(frozen=True)
class NamePattern:
    """Many names found at once in text: whole words, case-insensitive, and where names
    overlap the one starting first wins, then the longest (as `(?<!\\w)(?:...)(?!\\w)` with
    the names longest first would match).

    A name that starts and ends with a word character can only match from the start of a
    word of the text to the end of a word, so it is looked up by its words: the text's words
    are walked once and at each the spans of as many words as some name starting with that
    word has are tried in a dict. Building that for 10,000 names takes milliseconds, where
    compiling one regular expression for them took most of a second, and finding them costs
    a dict lookup per word. The rare name that starts or ends otherwise ("-al", "Dor's.")
    goes into a small regular expression instead.
    """

    owners: dict[str, tuple[str, ...]]
    _spans: dict[str, tuple[int, ...]]
    """First word (casefolded) -> the word counts of names starting with it, most first."""
    _irregular: re.Pattern[str] | None
    _span_terms: dict[str, dict[int, int]] = field(default_factory=dict, compare=False)
    """First word -> word count -> how many terms: what `with_changes` patches `_spans` by."""

    @classmethod
    def of_terms(cls, terms: Iterable[tuple[str, str]]) -> NamePattern:
        """From (term, owner id) pairs."""
        owners: dict[str, list[str]] = {}
        for term, owner in terms:
            cleaned = term.strip()
            if len(cleaned) >= MIN_TERM_CHARS:
                owners.setdefault(cleaned.casefold(), []).append(owner)
        return cls._of_owners({term: tuple(ids) for term, ids in owners.items()})

    @classmethod
    def _of_owners(cls, owners: dict[str, tuple[str, ...]]) -> NamePattern:
        span_terms: dict[str, dict[int, int]] = {}
        irregular = []
        for term in owners:
            words = _WORD.findall(term)
            if words and _is_word_char(term[0]) and _is_word_char(term[-1]):
                counts = span_terms.setdefault(words[0], {})
                counts[len(words)] = counts.get(len(words), 0) + 1
            else:
                irregular.append(term)
        return cls(
            owners,
            {first: _most_first(counts) for first, counts in span_terms.items()},
            _irregular_pattern(irregular),
            span_terms,
        )

    def with_changes(self, removed: Iterable[Entity], added: Iterable[Entity]) -> NamePattern:
        """This pattern without the `removed` entities' names and with the `added` ones'
        (an entity changed is both): what `of_entities` gives for the entities after the
        change, when they are in order of id as a scope's are, in a fraction of the time.

        Owners stay in order of id, each as often as it has the term, as a fresh build
        over entities in order of id lists them."""
        owners = dict(self.owners)
        before: set[str] = set()
        for entity in removed:
            for term in set(_terms(entity)):
                owners[term] = tuple(o for o in owners.get(term, ()) if o != entity.id)
                before.add(term)
        for entity in added:
            for term in _terms(entity):
                # Stable: an owner already there keeps its place among equal ids.
                owners[term] = tuple(sorted((*owners.get(term, ()), entity.id)))
        touched = before | {term for entity in added for term in _terms(entity)}
        existed = {term for term in touched if self.owners.get(term)}
        for term in touched:
            if not owners[term]:
                del owners[term]
        exists = {term for term in touched if term in owners}
        if any(_first_word(term) is None for term in touched):
            return NamePattern._of_owners(owners)  # an irregular name: rare, build anew
        spans = dict(self._spans)
        span_terms = dict(self._span_terms)
        for term, step in [(t, -1) for t in existed - exists] + [(t, 1) for t in exists - existed]:
            words = _WORD.findall(term)
            counts = span_terms[words[0]] = dict(span_terms.get(words[0], {}))
            counts[len(words)] = counts.get(len(words), 0) + step
            if not counts[len(words)]:
                del counts[len(words)]
            if counts:
                spans[words[0]] = _most_first(counts)
            else:
                del span_terms[words[0]]
                spans.pop(words[0], None)
        return NamePattern(owners, spans, self._irregular, span_terms)

    @classmethod
    def of_entities(cls, entities: Sequence[Entity]) -> NamePattern:
        return cls.of_terms(
            (spelling, entity.id)
            for entity in entities
            for spelling in (entity.name, *entity.aliases)
        )

    def mentions(self, text: str) -> Iterator[Mention]:
        """The names in `text`, left to right, never overlapping."""
        if not self.owners:
            return
        longest = self._longest_at(text)
        resume = 0
        for start in sorted(longest):
            if start >= resume:
                end, term = longest[start]
                yield Mention(start, end, term)
                resume = end

    def found_in(self, text: str) -> bool:
        return next(self.mentions(text), None) is not None

    def owners_in(self, text: str) -> list[str]:
        """Ids of the entities named in `text`, in order of first mention, each once."""
        seen: dict[str, None] = {}
        for mention in self.mentions(text):
            for owner in self.owners[mention.term]:
                seen.setdefault(owner, None)
        return list(seen)

    def _longest_at(self, text: str) -> dict[int, tuple[int, str]]:
        """For each position where a name starts, its longest name there: (end, term)."""
        longest: dict[int, tuple[int, str]] = {}
        words = [(m.start(), m.end()) for m in _WORD.finditer(text)] if self._spans else []
        for index, (start, first_end) in enumerate(words):
            counts = self._spans.get(text[start:first_end].casefold())
            if counts is None:
                continue
            for count in counts:
                if index + count > len(words):
                    continue
                end = words[index + count - 1][1]
                term = text[start:end].casefold()
                if term in self.owners:
                    longest[start] = (end, term)
                    break
        if self._irregular is not None:
            for match in self._irregular.finditer(text):
                start, end = match.span(1)
                if end > longest.get(start, (start, ""))[0]:
                    longest[start] = (end, match.group(1).casefold())
        return longest


def _terms(entity: Entity) -> list[str]:
    """The entity's names as `of_terms` keys them (casefolded; too short ones left out)."""
    cleaned = (spelling.strip() for spelling in (entity.name, *entity.aliases))
    return [term.casefold() for term in cleaned if len(term) >= MIN_TERM_CHARS]


def _first_word(term: str) -> str | None:
    """The first word of a regular term (found by its words), None for an irregular one."""
    words = _WORD.findall(term)
    if words and _is_word_char(term[0]) and _is_word_char(term[-1]):
        return str(words[0])
    return None


def _most_first(counts: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted(counts, reverse=True))


def _irregular_pattern(irregular: list[str]) -> re.Pattern[str] | None:
    # Zero-width, so that every position is tried, not only those after a match.
    if not irregular:
        return None
    return re.compile(rf"(?<!\w)(?=({_trie(irregular)})(?!\w))", re.IGNORECASE)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _trie(terms: Iterable[str]) -> str:
    """One alternation for all the terms, shaped as a trie: `(?:ab(?:c|d)?|x)` for ab, abc,
    abd and x.

    It matches what the flat alternation of the terms sorted longest first matches, at the
    same places: the terms that can match at one position are prefixes of one another, so
    they lie on one path of the trie, where longer continuations are tried before stopping.
    """
    return _alternation(sorted(set(terms)))


def _alternation(terms: list[str]) -> str:
    """The trie of sorted, distinct terms (the empty term means "may stop here")."""
    ends_here = terms[0] == ""
    branches = []
    for _, group in itertools.groupby(terms[1:] if ends_here else terms, key=lambda t: t[0]):
        members = list(group)
        # Jump over the prefix all of them share: only branching points need a group.
        shared = os.path.commonprefix(members)  # noqa: RUF071 - names, not paths
        branches.append(re.escape(shared) + _alternation([t[len(shared) :] for t in members]))
    if not branches:
        return ""
    if len(branches) == 1 and not ends_here:
        return branches[0]
    return f"(?:{'|'.join(branches)}){'?' if ends_here else ''}"
