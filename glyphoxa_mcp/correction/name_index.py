"""The known names, prepared once for fast sound-alike lookup. (pure)

Each name is keyed by its letters and by the Metaphone code of those letters taken as one
word, so a split mishearing ("dove wreck") meets the compound name ("Dovrek") on the code of
the whole window. Lookup goes through the codes' deletion neighbourhoods (SymSpell style):
every code with up to two letters dropped points at the names it came from, so finding the
names within a couple of code edits is a few dictionary lookups, however many names there are.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import lru_cache

import jellyfish
import numpy as np
from rapidfuzz.distance import Indel
from rapidfuzz.process import cdist

from glyphoxa_mcp.correction.english import FUNCTION_WORDS
from glyphoxa_mcp.correction.name_forms import looks_like_a_person, short_forms
from glyphoxa_mcp.correction.rebuild import Rebuild
from glyphoxa_mcp.correction.words import ascii_letters, letters

_PARTS = re.compile(r"[\s'\u2019\-]+")
SIMILARITY_CACHE_SIZE = 65_536
# Names dropped or added by patches past which the index is built in one layer again, in a
# thread; past the larger number (rebuilds failing), in place.
REBUILD_AT = 512
MAX_PATCHED_NAMES = 8_192
_INDEL = Indel.normalized_similarity


@dataclass(frozen=True, slots=True)
class KnownName:
    """A spelling to restore: an entity's name or one of its aliases. `person` says whether
    it names a person (whose surname or given name alone is a name too; name_forms.py),
    None when the caller does not know."""

    text: str
    entity_id: str | None = None
    person: bool | None = None


@dataclass(frozen=True, slots=True)
class PreparedName:
    name: KnownName
    key: str
    codes: tuple[str, ...]
    word_count: int  # words between spaces: "Captain Oriel Vask" -> 3
    parts: int  # hyphens and apostrophes split too: "Oru-Tambe" -> 2
    words: frozenset[str]
    # Where each word that carries the name ("Lantern", "Osk"; not "of") lies in `key`, for
    # names of two such words or more: each must be heard (alignment.py).
    word_spans: tuple[tuple[int, int], ...] = ()
    # For a shorter form of a person's name ("Grell", "Captain Grell"), the name it is a form
    # of ("Captain Tobiah Grell"); None for a name as given.
    full: str | None = None
    # Whether its words are a person's name ("Old Gammerick", "Quillon Darrow";
    # name_forms.py), whatever the caller says of its entity.
    person_like: bool = False

    def same_entity(self, other: PreparedName) -> bool:
        """Whether both are spellings of one entity (of one name, when ids are unknown)."""
        if self.name.entity_id is not None or other.name.entity_id is not None:
            return self.name.entity_id == other.name.entity_id
        return (self.full or self.name.text) == (other.full or other.name.text)

    @property
    def least_words(self) -> int:
        """The fewest words it may be heard as: its own, less an unstressed "of" or "the"
        ("isle varr" for "Isle of Varr"), never a word that carries it ("Captain Vask" is
        a partial reference, not a mishearing)."""
        return len(self.word_spans) or self.word_count


def _is_description(text: str) -> bool:
    # "the innkeeper", "the Kettle": how people refer to an entity, not a name speech-to-text
    # could garble; restoring it would turn "the little" into "the Kettle".
    return text.split()[0].casefold() in ("the", "a", "an")


# Codes and their neighbourhoods are pure and the same words come back line after line, and
# index after index: a name index patched after an edit (issue 17) starts with an empty
# lookup cache, and these keep its first lookups from recomputing every code.
@lru_cache(maxsize=SIMILARITY_CACHE_SIZE)
def phonetic_codes(key: str) -> tuple[str, ...]:
    """Metaphone of the letters, plus a reading of "ch" as in "loch" ("Brannoch")."""
    plain = ascii_letters(key)
    codes = [jellyfish.metaphone(plain)] if plain else []
    if "ch" in plain:
        codes.append(jellyfish.metaphone(plain.replace("ch", "k")))
    return tuple(dict.fromkeys(code for code in codes if code))


@lru_cache(maxsize=SIMILARITY_CACHE_SIZE)
def _deletions(code: str, max_edits: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The code with at most one letter dropped, and with two dropped (never below three
    letters, and only as far as max_edits allows), each variant once. Tuples of strings,
    which the cyclic collector stops tracking after its first pass: as sets, a full cache
    was a million references it walked at every full pass, pausing the whole server for
    up to a third of a second."""
    n = len(code)
    near = {code}
    if max_edits >= 1 and n > 3:
        near.update(code[:i] + code[i + 1 :] for i in range(n))
    far: set[str] = set()
    if max_edits >= 2 and n > 4:
        far.update(
            code[:i] + code[i + 1 : j] + code[j + 1 :] for i in range(n) for j in range(i + 1, n)
        )
    return tuple(near), tuple(far - near)


def similarity(key: str, codes: tuple[str, ...], name: PreparedName) -> float:
    """How alike a heard window and a name are, by sound and by spelling, from 0 to 1."""
    by_sound = max(
        (Indel.normalized_similarity(a, b) for a in codes for b in name.codes), default=0.0
    )
    return (by_sound + Indel.normalized_similarity(key, name.key)) / 2


def prepared_names(names: Iterable[KnownName], forms: bool = False) -> list[PreparedName]:
    """The names to index, prepared: each (spelling, entity) once, descriptions left out;
    with `forms`, then the shorter forms of people's names (name_forms.py) that are not
    already among them."""
    prepared: list[PreparedName] = []
    seen: set[tuple[str, str | None]] = set()
    given: list[tuple[str, KnownName]] = []
    for name in names:
        text = name.text.strip()
        if not text or (text, name.entity_id) in seen or _is_description(text):
            continue
        named = _prepared(text, name.entity_id, name.person)
        if named is not None:
            seen.add((text, name.entity_id))
            prepared.append(named)
            given.append((text, name))
    for text, name in given if forms else ():
        for form in short_forms(text, name.person):
            if (form, name.entity_id) not in seen:
                seen.add((form, name.entity_id))
                shorter = _prepared(form, name.entity_id, True, text)
                if shorter is not None:
                    prepared.append(shorter)
    return prepared


def _prepared(
    text: str, entity_id: str | None, person: bool | None, full: str | None = None
) -> PreparedName | None:
    key = letters(text)
    if not key:
        return None
    return PreparedName(
        name=KnownName(text, entity_id, person),
        key=key,
        codes=phonetic_codes(key),
        word_count=len(text.split()),
        parts=len([p for p in _PARTS.split(text) if p]),
        words=frozenset(text.casefold().split()),
        word_spans=_word_spans(text),
        full=full,
        person_like=looks_like_a_person(full or text),
    )


def _word_spans(text: str) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    at = 0
    for word in text.split():
        key = letters(word)
        if key and word.casefold() not in FUNCTION_WORDS:
            spans.append((at, at + len(key)))
        at += len(key)
    return tuple(spans) if len(spans) > 1 else ()


class _Layer:
    """Prepared names looked up by their letters and by their codes' deletion
    neighbourhoods; built once and never changed."""

    def __init__(self, names: list[PreparedName], max_code_edits: int, number: int) -> None:
        self.names = names
        self.number = number
        self.by_key: dict[str, list[int]] = {}
        self.by_entity: dict[str | None, list[int]] = {}
        # Codes with up to one letter dropped, and with two: a window and a name meet when
        # their codes agree after at most three dropped letters in all, never two a side.
        self.near: dict[str, set[int]] = {}
        self.far: dict[str, set[int]] = {}
        for position, prepared in enumerate(names):
            self.by_key.setdefault(prepared.key, []).append(position)
            self.by_entity.setdefault(prepared.name.entity_id, []).append(position)
            for code in prepared.codes:
                near, far = _deletions(code, max_code_edits)
                for variant in near:
                    self.near.setdefault(variant, set()).add(position)
                for variant in far:
                    self.far.setdefault(variant, set()).add(position)
        # As arrays, so that a lookup takes its candidates' strings in one step.
        self.keys = np.array([n.key for n in names], dtype=object)
        self.primary_codes = np.array([n.codes[0] if n.codes else "" for n in names], dtype=object)
        self.alternate_codes = np.array(
            [n.codes[1] if len(n.codes) > 1 else "" for n in names], dtype=object
        )
        self.has_alternates = any(len(n.codes) > 1 for n in names)
        self.longest_code = max((len(c) for n in names for c in n.codes), default=0)
        self.longest_key = max((len(n.key) for n in names), default=0)
        self.parts = Counter(n.parts for n in names)
        self.function_words = Counter(w for n in names for w in n.words & FUNCTION_WORDS)
        self.longest_with: dict[str, int] = {}
        for n in names:
            for word in n.words if n.word_count > 1 else ():
                self.longest_with[word] = max(n.word_count, self.longest_with.get(word, 0))

    @functools.cached_property
    def variants(self) -> frozenset[str]:
        """Every code variant of the layer's names (for `NameIndex.may_name`)."""
        return frozenset(self.near) | frozenset(self.far)

    def order(self, position: int) -> tuple[bool, str, int, int]:
        """Where a name stands among equally good ones: names as given before the shorter
        forms of people's names ("Kell" the town before Sister Kell's surname), then by
        entity id, then as given (a layer holds all the names of its entities, so their own
        order is kept)."""
        name = self.names[position]
        return (name.full is not None, name.name.entity_id or "", self.number, position)


class NameIndex:
    """Known names prepared for lookup by spelling and by sound.

    An index can be patched (`with_changes`): the names of some entities dropped and their
    new ones added, without preparing every name again (a second or so for 12,000 names,
    more than a call may wait after a DM renames one). A patched index is its base with
    those entities' positions dropped plus a small layer of their current names; it answers
    exactly as an index built from scratch over the same names in the same order (names
    ordered by entity id, as a campaign's are): where names tie, they are ranked by entity id
    and then in their given order, in every index, so that layering changes no answer.
    """

    def __init__(
        self, names: Iterable[KnownName], max_code_edits: int = 2, forms: bool = False
    ) -> None:
        """`forms`: index the shorter forms of people's names too (name_forms.py)."""
        if not 0 <= max_code_edits <= 2:
            raise ValueError("max_code_edits must be 0, 1 or 2")
        layer = _Layer(prepared_names(names, forms), max_code_edits, 0)
        self._setup(max_code_edits, (layer,), forms=forms)

    def _setup(
        self,
        max_code_edits: int,
        layers: tuple[_Layer, ...],
        dropped: frozenset[int] = frozenset(),
        forms: bool = False,
    ) -> None:
        self.max_code_edits = max_code_edits
        self.forms = forms
        self._layers = layers
        self._dropped = dropped
        # Which patch last changed each entity, for a rebuild to take the later ones on.
        self._changed_at: dict[str, int] = {}
        self._generation = 0
        self._rebuild: Rebuild[NameIndex] | None = None
        if len(layers) == 1 and not dropped:
            self._names: list[PreparedName] | None = layers[0].names
        else:
            self._names = None
        parts: Counter[int] = Counter()
        function_words: Counter[str] = Counter()
        for layer in layers:
            parts += layer.parts
            function_words += layer.function_words
        for position in dropped:
            gone = layers[0].names[position]
            parts[gone.parts] -= 1
            function_words.subtract(gone.words & FUNCTION_WORDS)
        self._count = sum(len(layer.names) for layer in layers) - len(dropped)
        # Upper bounds, which only ever skip lookups that could find nothing: a dropped
        # name may keep them high.
        self._longest_code = max(layer.longest_code for layer in layers)
        self.longest_key = max(layer.longest_key for layer in layers)
        # Exact: which windows are tried depends on them. The function words some name has
        # ("of", "the"): a window with another one inside is a clause, not a name.
        self.function_words = frozenset(w for w, count in function_words.items() if count > 0)
        self.has_article = "the" in self.function_words
        self.max_parts = max((p for p, count in parts.items() if count > 0), default=0)
        # The most words of a name with each word: a name spelled right may be part of a
        # longer name misheard around it only if each of its words is in a longer name. (An
        # upper bound: a dropped name may keep its words here.)
        self.longest_with: dict[str, int] = {}
        for layer in layers:
            for word, count in layer.longest_with.items():
                self.longest_with[word] = max(count, self.longest_with.get(word, 0))
        self._similar = lru_cache(maxsize=SIMILARITY_CACHE_SIZE)(self._similar_uncached)

    @property
    def names(self) -> list[PreparedName]:
        """The names, ranked as ties are (by entity id, then as given)."""
        if self._names is None:
            located = sorted(self._alive_positions(), key=lambda lp: lp[0].order(lp[1]))
            self._names = [layer.names[position] for layer, position in located]
        return self._names

    def _alive_positions(self) -> list[tuple[_Layer, int]]:
        return [
            (layer, position)
            for layer in self._layers
            for position in range(len(layer.names))
            if layer.number or position not in self._dropped
        ]

    def __len__(self) -> int:
        return self._count

    @property
    def patched_names(self) -> int:
        """How many names this index holds beyond or against its base: what a lookup pays
        for patching instead of building anew."""
        return len(self._dropped) + sum(len(layer.names) for layer in self._layers[1:])

    def with_changes(self, entity_ids: Collection[str], names: Iterable[KnownName]) -> NameIndex:
        """This index with every name of `entity_ids` dropped and `names` (theirs now)
        added: the cost is that of the changed names, not of all of them. Past REBUILD_AT
        patched names the index is built in one layer again in a thread (rebuild.py), and
        a later patch starts from that once it is ready."""
        generation = self._generation + 1
        changed_at = {**self._changed_at, **dict.fromkeys(entity_ids, generation)}
        patched = self._layered(set(entity_ids), names)
        rebuild = self._rebuild
        if rebuild is not None and rebuild.result is not None:
            # Changes made since the rebuild started go on top of it.
            newer = {i for i, at in changed_at.items() if at > rebuild.generation}
            # Their names as given: the shorter forms are derived from them again.
            current = [
                n.name
                for n in patched._layers[-1].names
                if n.name.entity_id in newer and n.full is None
            ]
            patched = rebuild.result._layered(newer, current)
            changed_at = {i: changed_at[i] for i in newer}
            rebuild = None
        elif patched.patched_names > REBUILD_AT and (rebuild is None or rebuild.failed):
            if patched.patched_names > MAX_PATCHED_NAMES:
                return patched.compacted()  # rebuilds keep failing: build it here
            rebuild = Rebuild(patched.compacted, generation)
        patched._changed_at = changed_at
        patched._generation = generation
        patched._rebuild = rebuild
        return patched

    def _layered(self, changed: set[str], names: Iterable[KnownName]) -> NameIndex:
        base = self._layers[0]
        dropped = set(self._dropped)
        for entity_id in changed:
            dropped.update(base.by_entity.get(entity_id, ()))
        kept = [
            n for layer in self._layers[1:] for n in layer.names if n.name.entity_id not in changed
        ]
        added = prepared_names((n for n in names if n.entity_id in changed), self.forms)
        # Stable: each entity's names keep their order.
        extra = sorted(kept + added, key=lambda n: n.name.entity_id or "")
        patched = NameIndex.__new__(NameIndex)
        patched._setup(
            self.max_code_edits,
            (base, _Layer(extra, self.max_code_edits, 1)),
            frozenset(dropped),
            self.forms,
        )
        return patched

    def compacted(self) -> NameIndex:
        """The same names in one layer: what a patched index is rebuilt into once its
        patches have grown (most of a second for 12,000 names; see `with_changes`)."""
        if len(self._layers) == 1 and not self._dropped:
            return self
        fresh = NameIndex.__new__(NameIndex)
        layer = _Layer(list(self.names), self.max_code_edits, 0)
        fresh._setup(self.max_code_edits, (layer,), forms=self.forms)
        return fresh

    def given_names(self) -> list[KnownName]:
        """The names as given (their shorter forms follow from them), each entity's in its
        order, the entities in no order: cheaper than `names`, which ranks them all."""
        return [
            layer.names[position].name
            for layer, position in self._alive_positions()
            if layer.names[position].full is None
        ]

    def names_of(self, entity_id: str) -> tuple[KnownName, ...]:
        """The entity's names in this index, in their order."""
        return tuple(
            layer.names[position].name
            for layer in self._layers
            for position in layer.by_entity.get(entity_id, ())
            if layer.number or position not in self._dropped
        )

    def may_name(self, key: str, words: int = 2) -> bool:
        """Whether some name could be spelled like these letters or sound like them (what
        `spells` and `similar` need, and cheaper to rule out: a few set lookups)."""
        if self.spells(key):
            return True
        edits = self.max_code_edits if words > 1 else min(self.max_code_edits, 1)
        for code in phonetic_codes(key):
            near, far = _deletions(code, edits)
            for layer in self._layers:
                if not layer.variants.isdisjoint(near) or not layer.near.keys().isdisjoint(far):
                    return True
        return False

    def spells(self, key: str) -> bool:
        """Whether some name has exactly these letters."""
        return bool(self._exact_positions(key))

    def exact(self, key: str) -> list[PreparedName]:
        """Names spelled with exactly these letters (case, spaces and punctuation aside)."""
        found = self._exact_positions(key)
        if len(found) > 1:
            found.sort(key=lambda lp: lp[0].order(lp[1]))
        return [layer.names[position] for layer, position in found]

    def _exact_positions(self, key: str) -> list[tuple[_Layer, int]]:
        return [
            (layer, position)
            for layer in self._layers
            for position in layer.by_key.get(key, ())
            if layer.number or position not in self._dropped
        ]

    def similar(
        self, key: str, floor: float = 0.0, words: int = 2
    ) -> tuple[tuple[PreparedName, float], ...]:
        """Names that sound like the letters at least this much, best first, with the score;
        `words` is how many words the letters were heard as."""
        layers = self._layers
        return tuple(
            (layers[layer].names[position], score)
            for layer, position, score in self._similar(key, floor, words > 1)
        )

    def _similar_uncached(
        self, key: str, floor: float, several_words: bool
    ) -> tuple[tuple[int, int, float], ...]:
        """What `similar` finds, as (layer, position, score): numbers only, which the cyclic
        collector stops tracking after its first pass. A server keeps tens of thousands of
        these answers, and as pairs of names every full collection walked them all."""
        codes = phonetic_codes(key)
        if min(map(len, codes), default=0) > self._longest_code + self.max_code_edits:
            return ()
        # One word heard is a name's letters give or take a syllable; only words heard
        # apart ("bran knock") add sounds of their own, and may drop two code letters.
        edits = self.max_code_edits if several_words else min(self.max_code_edits, 1)
        found: list[tuple[int, int, float]] = []
        for number, layer in enumerate(self._layers):
            positions = _nearby(layer, codes, edits)
            if not layer.number:
                positions -= self._dropped
            if not positions:
                continue
            at = np.fromiter(positions, dtype=np.intp, count=len(positions))
            scores = cdist([key], layer.keys[at], scorer=_INDEL)[0]
            by_sound = cdist(codes, layer.primary_codes[at], scorer=_INDEL).max(0)
            if layer.has_alternates:
                alternates = cdist(codes, layer.alternate_codes[at], scorer=_INDEL).max(0)
                by_sound = np.maximum(by_sound, alternates)
            scores = (scores + by_sound) / 2
            kept = np.flatnonzero(scores >= floor)
            found += [(number, int(at[i]), float(scores[i])) for i in kept]
        # Equally good names are ranked the same way in every index (see the class).
        found.sort(key=lambda hit: (-hit[2], self._layers[hit[0]].order(hit[1])))
        return tuple(found)


def _nearby(layer: _Layer, codes: tuple[str, ...], edits: int) -> set[int]:
    """Positions in `layer` of names whose codes are within `edits` of one of `codes`."""
    positions: set[int] = set()
    for code in codes:
        near, far = _deletions(code, edits)
        for variant in near:
            for index in (layer.near, layer.far):
                found = index.get(variant)
                if found:
                    positions |= found
        for variant in far:
            found = layer.near.get(variant)
            if found:
                positions |= found
    return positions
