"""Stage 1 of name correction: sound-alike windows of words back to the names they garble.

Every run of up to (name parts + 2) words is compared with the known names by the phonetic
code of the whole window and by its letters; the best-scoring windows that do not overlap win,
so neighbours are never swallowed and a better match later in the line is still found. Spans
already spelled like a name are fixed points. A multi-word name must match word for word
("sunk near" is not "Sunken Verge"; alignment.py), though an unstressed "of" may be dropped
and a filler added. Ordinary speech is protected by what it looks like: a phrase after
"a"/"this"/"his", a player addressed by a name English knows ("Kristen, ..."; "Grel, ..." is
mended), a common word alone or with only function words around it ("the mill is"), a clause
(a pronoun or auxiliary inside: "the crown is gold"), an inflected everyday phrase, a
function word at the edge that adds nothing to the match, and everyday words in lower case,
unless a transcriber that capitalises names wrote them as one.
A person's given name or surname alone, or after the title ("captain grel"), is a name too
(name_forms.py), on weaker evidence: never an English word alone, in lower case in a
capitalised line, English words ending in a phrase ("marrow by the fire"), nor beside the
rest of the name heard otherwise (candidates.py and alignment.py keep names whole). A
person's name, whole or short, takes no article ("the old gamer trick" is no Old
Gammerick), and a function word heard inside a name stands for some of its sounds ("grim
and bald" is no Grimbald). Everyday words are no surname alone, even spelled like it ("fair
weather today" with Linnet Fairweather); a name English knows, written as a name inside a
sentence, is someone else's ("Is Corinne coming tonight?" with Corrin Vask); words that
join into an English word are that word written apart ("Pell mell they ran" is no Pellam);
and the capital that starts a sentence does not make its words a name.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz.distance import Indel

from glyphoxa_mcp.correction.alignment import (
    adds_a_word,
    rest_heard_beside,
    unheard_edges,
    weakest_word,
)
from glyphoxa_mcp.correction.candidates import Candidate, Guard, chosen
from glyphoxa_mcp.correction.english import (
    CLAUSE_WORDS,
    DETERMINERS,
    FILLERS,
    FUNCTION_WORDS,
    frequency,
    inflection,
)
from glyphoxa_mcp.correction.name_forms import ENGLISH_PER_MILLION, TITLES
from glyphoxa_mcp.correction.name_index import (
    KnownName,
    NameIndex,
    PreparedName,
    phonetic_codes,
    similarity,
)
from glyphoxa_mcp.correction.words import Word, letters, segments

# A word heard and the name's word in its place share this much of their letters when one
# is the other misheard ("reads", "reeds"), not another word ("habits", "debts").
MISHEARD_WORD_LETTERS = 0.7


class PhoneticSettings(BaseModel):
    """Thresholds of the phonetic stage; the defaults are tuned on the phonetic dev set."""

    model_config = ConfigDict(frozen=True)

    threshold: float = Field(0.72, ge=0, le=1, description="Least similarity to replace.")
    extra_words: int = Field(
        2, ge=0, le=4, description="Words a mishearing may have beyond the name's parts."
    )
    edge_margin: float = Field(
        0.1, ge=0, le=1, description="What a function word at a window's edge must add."
    )
    common_word_per_million: float = Field(
        0.6, ge=0, description="Frequency from which a word counts as everyday English."
    )
    everyday_phrase_per_million: float = Field(
        20.0, ge=0, description="Words all this frequent make an ordinary phrase."
    )
    inflection_stem_per_million: float = Field(
        0.12, ge=0, description="Frequency from which a stem makes 'stem+s/ed/ing' ordinary."
    )
    max_code_edits: int = Field(2, ge=0, le=3, description="Code letters a lookup may miss.")
    word_floor: float = Field(
        0.55, ge=0, le=1, description="Least similarity of each word of a multi-word name."
    )
    single_word_letters: float = Field(
        0.55, ge=0, le=1, description="Least share of letters a single word heard must keep."
    )
    short_forms: bool = Field(
        True,
        description="People's surnames, given names and title + surname are names too.",
    )
    form_threshold: float = Field(
        0.78,
        ge=0,
        le=1,
        description="Least similarity to replace with a short form of a person's name.",
    )
    english_word_per_million: float = Field(
        ENGLISH_PER_MILLION,
        ge=0,
        description="Frequency from which a word heard for a short form of a person's name "
        "is an English word.",
    )
    unheard_letters: int = Field(
        2,
        ge=1,
        description="Letters of a name left unheard at a window's edge from which a "
        "neighbour that hears them makes the window part of a longer mishearing.",
    )


class NameCorrection(BaseModel):
    model_config = ConfigDict(frozen=True)

    start: int
    end: int
    heard: str
    entity: str
    entity_id: str | None = None
    score: float


class CorrectedText(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    corrected: str
    corrections: tuple[NameCorrection, ...] = ()
    # The entities named in the text as written: spelled right (a short form of a person's
    # name too: "Kazimir" for Kazimir Drovak), not taken for an ordinary word, and not part
    # of a longer name put back around it ("drovak keap" is Drovak Keep).
    spelled_ids: tuple[str | None, ...] = ()


def _spelled_ids(fixed: list[Candidate], picked: list[Candidate]) -> tuple[str | None, ...]:
    put_back = [c for c in picked if not any(c is f for f in fixed)]
    return tuple(
        dict.fromkeys(
            f.name.name.entity_id
            for f in fixed
            if f.guard is None and not any(c.overlaps(f.start, f.end) for c in put_back)
        )
    )


class PhoneticCorrector:
    def __init__(
        self,
        names: NameIndex | Iterable[KnownName | str],
        settings: PhoneticSettings | None = None,
    ) -> None:
        self.settings = settings or PhoneticSettings()
        if isinstance(names, NameIndex):
            self.index = names
        else:
            self.index = NameIndex(
                (KnownName(n) if isinstance(n, str) else n for n in names),
                max_code_edits=self.settings.max_code_edits,
                forms=self.settings.short_forms,
            )
        self.max_window = self.index.max_parts + self.settings.extra_words

    def correct(self, text: str) -> CorrectedText:
        runs = segments(text)
        cased = _cased(text)
        fixed = self._spelled_names(text, runs, cased)
        found = self._sound_alikes(text, runs, fixed, cased)
        picked = chosen(text, fixed, found, self.settings.unheard_letters)
        corrections = tuple(
            NameCorrection(
                start=c.start,
                end=c.end,
                heard=text[c.start : c.end],
                entity=c.name.name.text,
                entity_id=c.name.name.entity_id,
                score=round(c.score, 3),
            )
            for c in picked
        )
        return CorrectedText(
            text=text,
            corrected=_apply(text, corrections),
            corrections=corrections,
            spelled_ids=_spelled_ids(fixed, picked),
        )

    def _spelled_names(self, text: str, runs: list[list[Word]], cased: bool) -> list[Candidate]:
        """Spans spelled like a name already: kept (or re-cased), and never re-matched."""
        spelled: list[tuple[int, int, list[Word], str | None, str | None]] = []
        for run in runs:
            for i in range(len(run)):
                key = ""
                for j in range(i, min(i + self.max_window, len(run))):
                    key += run[j].key
                    if len(key) > self.index.longest_key:
                        break
                    if self.index.spells(key):
                        before = run[i - 1].lowered if i > 0 else None
                        after = run[j + 1].lowered if j + 1 < len(run) else None
                        spelled.append((j + 1 - i, i, run[i : j + 1], before, after))
        found: list[Candidate] = []
        # Longest first, then leftmost.
        for _, _, window, before, after in sorted(spelled, key=lambda item: (-item[0], item[1])):
            start, end = window[0].start, window[-1].end
            if any(f.overlaps(start, end) for f in found):
                continue
            names = self.index.exact("".join(w.key for w in window))
            heard = text[start:end]
            same = [n for n in names if n.name.text == heard]
            name = same[0] if same else names[0]
            guard: Guard | None = None
            if not same and self._ordinary_phrase(text, window, name, cased, before, after):
                guard = "common word"
            found.append(Candidate(1.0, start, end, name, guard))
        return found

    def _ordinary_phrase(
        self,
        text: str,
        window: list[Word],
        name: PreparedName,
        cased: bool,
        before: str | None,
        after: str | None,
    ) -> bool:
        heard = text[window[0].start : window[-1].end]
        if name.full is not None and heard != name.name.text:
            return self._ordinary_for_a_form(text, window, cased, before, after)
        if before == "the" and name.person_like:
            return True  # people's names take no article (see `_guard`)
        # Spelled like a name but written in lower case: "the red kettle" in a transcript
        # that capitalises names is a kettle; in lower-case streaming output casing says
        # nothing, except that one common word is just a word. A sentence's first capital
        # says nothing either ("Silent bells hang in the tower").
        if not _written_lower(text, window):
            return False
        if heard.casefold() != name.name.text.casefold():
            # Words joined into a one-word name are a phrase only with the determiner a
            # common noun needs: "the amber watch on her wrist" is a watch, "we ask grim
            # jaw" asks Grimjaw; English words after it, as `_guard` has them ("the fallow
            # field" is no Fallowfield).
            return (
                cased
                and (before == "the" or before in DETERMINERS)
                and all(self._english(w.standard) for w in window)
            )
        if not all(self._common(w.standard) for w in window):
            return False
        return cased or len(window) == 1

    def _ordinary_for_a_form(
        self,
        text: str,
        window: list[Word],
        cased: bool,
        before: str | None,
        after: str | None,
    ) -> bool:
        """A surname or given name alone (or after a title) is weaker evidence than a whole
        name: English words stand for one only where a name could stand. Not after "the"
        or another determiner (people's names take none: "put the kettle by the fire" with
        Ulfar Kettleby), and not in lower case in a transcript that capitalises names ("The
        room is all dust" with Aldous)."""
        if before == "the" or before in DETERMINERS:
            return True
        if self._english_phrase_edge(window, after):
            return True
        if self._everyday_phrase(text, window):
            return True
        return cased and self._lower_case_english(text, window)

    def _english_phrase_edge(self, window: list[Word], after: str | None) -> bool:
        """English words with a function word at an edge, heard for a surname or given name
        alone: a phrase ends or begins there when the function word leads the window or
        takes the words after it ("we eat marrow by the fire" is no Marrowby; "kettle by
        wants a word" may be Kettleby). A form is weaker evidence than a whole name, which
        needs the function word only to add to the match (`_guard`'s loose edge)."""
        if len(window) < 2 or not all(
            self._english(w.standard) for w in window if w.lowered not in FUNCTION_WORDS
        ):
            return False
        leads = window[0].lowered in FUNCTION_WORDS
        takes = window[-1].lowered in FUNCTION_WORDS and (
            after == "the" or after in DETERMINERS or after in FUNCTION_WORDS
        )
        return leads or takes

    def _lower_case_english(self, text: str, window: list[Word]) -> bool:
        return _written_lower(text, window) and all(
            self._english(w.standard) for w in window if w.lowered not in FUNCTION_WORDS
        )

    def _everyday_phrase(self, text: str, window: list[Word]) -> bool:
        """Everyday words heard for a surname or given name alone, not written as a name:
        the name was made of the phrase, which is said far more often ("fair weather today"
        with Linnet Fairweather, "good water is hard to find" with Sister Maren Goodwater).
        With its title ("captain fair light"), or written as a name, it is the name."""
        content = [w for w in window if w.lowered not in FUNCTION_WORDS]
        return (
            len(content) > 1
            and not any(w.lowered in TITLES for w in content)
            and all(self._everyday(w) for w in content)
            and _written_lower(text, window)
        )

    def _english(self, word: str) -> bool:
        return frequency(word) >= self.settings.english_word_per_million

    def _common(self, word: str) -> bool:
        return frequency(word) >= self.settings.common_word_per_million

    def _plain_common(self, text: str, word: Word) -> bool:
        """A common word, or one inflected ("cinders", "nods"), not written as a name (a
        capital at a sentence start says nothing: "Sorry" is not "Sera")."""
        plain = word.text == word.lowered or _starts_sentence(text, word.start)
        return plain and (
            self._common(word.standard)
            or inflection(word.standard, self.settings.inflection_stem_per_million) is not None
        )

    def _everyday(self, word: Word) -> bool:
        return frequency(word.standard) >= self.settings.everyday_phrase_per_million

    def _sound_alikes(
        self, text: str, runs: list[list[Word]], fixed: list[Candidate], cased: bool
    ) -> list[Candidate]:
        found: list[Candidate] = []
        first_word = runs[0][0] if runs else None
        # Names spelled right that may be words of a longer name heard around them
        # ("captain toby a grell"); the others are never matched again.
        longest = self.index.longest_with
        extendable = [
            f for f in fixed if all(longest.get(w, 0) > f.name.word_count for w in f.name.words)
        ]
        for run in runs:
            function = [w.lowered in FUNCTION_WORDS for w in run]
            everyday = [self._everyday(w) for w in run]
            plain_common = [self._plain_common(text, w) for w in run]
            capital = [cased and w.text[:1].isupper() for w in run]
            clause = [
                w.lowered in CLAUSE_WORDS and w.lowered not in self.index.function_words
                for w in run
            ]
            for i in range(len(run)):
                key = ""
                only_function = only_everyday = capitalised = True
                has_article = False
                content = 0
                last_content = i
                for j in range(i, min(i + self.max_window, len(run))):
                    size = j + 1 - i
                    if size > 2 and clause[j - 1]:
                        break  # "crown is gold": a clause, and so is every longer window
                    key += run[j].key
                    only_function = only_function and function[j]
                    only_everyday = only_everyday and everyday[j]
                    has_article = has_article or run[j].lowered == "the"
                    if not function[j]:
                        content += 1
                        last_content = j
                        capitalised = capitalised and capital[j]
                    start, end = run[i].start, run[j].end
                    inside: list[Candidate] = []
                    if fixed:
                        clash = [f for f in fixed if f.overlaps(start, end)]
                        # A name spelled right is never matched again, except whole inside
                        # a longer name that has its words ("captain toby a grell").
                        if any(f.start < start or f not in extendable for f in clash):
                            break
                        if any(f.end > end for f in clash):
                            continue
                        inside = clash
                    if has_article and not self.index.has_article:
                        break
                    # Ordinary words and phrases would be guarded after the lookup anyway;
                    # most windows of a line are these, so skipping them keeps lookups few.
                    if only_function or (size == 1 and plain_common[i]):
                        continue
                    # Everyday words are a name when a transcriber that capitalises names
                    # wrote them as one ("We descend into Follow Deep").
                    named = capitalised and content > 1
                    if size > 1 and only_everyday and not named:
                        continue
                    # One common word and the grammar around it: "the mill is", "a crown".
                    if content == 1 and plain_common[last_content]:
                        continue
                    # Three words or more that start or end with a function word are a name
                    # and its neighbours ("to Captain Oriel Vask"); the shorter window wins.
                    if size > 2 and (function[i] or function[j]):
                        continue
                    best = self._best_name(text, run, i, j, key, has_article, named, first_word)
                    if best is None:
                        continue
                    if all(
                        best.name.word_count > f.name.word_count and f.name.words <= best.name.words
                        for f in inside
                    ):
                        found.append(best)
        return found

    def _best_name(
        self,
        text: str,
        run: list[Word],
        i: int,
        j: int,
        key: str,
        has_article: bool,
        named: bool,
        first_word: Word | None,
    ) -> Candidate | None:
        window = run[i : j + 1]
        size = len(window)
        start, end = window[0].start, window[-1].end
        best: Candidate | None = None
        for name, score in self.index.similar(key, self.settings.threshold, size):
            if not name.least_words <= size <= name.parts + self.settings.extra_words:
                continue
            # A surname or given name alone has fewer letters to go by than a whole name.
            if name.full is not None and score < self.settings.form_threshold:
                continue
            if weakest_word(window, name) < self.settings.word_floor:
                continue
            if size > 2 and adds_a_word(window, name):
                continue
            # One word heard for a name keeps most of its letters: the sound of a short name
            # is a consonant or two, which many words share ("gaol" and "Kael").
            if size == 1 and Indel.normalized_similarity(key, name.key) < (
                self.settings.single_word_letters
            ):
                continue
            if has_article and "the" not in name.words:
                continue
            if best is not None:
                if score >= best.score - 0.005 and name.name.text != best.name.name.text:
                    return Candidate(best.score, start, end, best.name, "ambiguous")
                return best
            before = run[i - 1].lowered if i > 0 else None
            after = run[j + 1].lowered if j + 1 < len(run) else None
            guard = self._guard(text, window, name, score, before, after, named, first_word)
            if guard is None and rest_heard_beside(
                name, run[:i], run[j + 1 :], self.settings.word_floor
            ):
                guard = "part of a name"
            best = Candidate(score, start, end, name, guard, unheard_edges(name, key))
        return best

    def _guard(
        self,
        text: str,
        window: list[Word],
        name: PreparedName,
        score: float,
        before: str | None,
        after: str | None,
        named: bool,
        first_word: Word | None,
    ) -> Guard | None:
        if before in DETERMINERS:
            return "determiner"
        # People's names take no article: "the old gamer trick" is no Old Gammerick.
        if before == "the" and name.person_like:
            return "determiner"
        if name.word_count == 1 and self._another_name(text, window, name):
            return "another name"
        if len(window) > 1 and frequency("".join(w.key for w in window)) > 0:
            # One word written apart ("Pell mell they ran" is pell-mell, not Pellam).
            return "one word"
        if name.full is not None:
            form_guard = self._form_guard(text, window, before, after, named)
            if form_guard is not None:
                return form_guard
        if len(window) == 1:
            word = window[0]
            # Someone addressed by a name English knows ("Kristen, roll initiative") is a
            # player, not a misheard NPC; a name English does not know ("Grel, ...") is one.
            if (
                word is first_word
                and text[word.end : word.end + 1] == ","
                and frequency(word.standard) > 0
            ):
                return "vocative"
            return "common word" if self._plain_common(text, word) else None
        # Lower-case English after "the", in a transcript that capitalises names, is a noun
        # phrase ("We passed the ebony marsh" with Ebonmarch), as a join of it spelled like
        # a one-word name is (`_ordinary_phrase`).
        if (
            before == "the"
            and name.word_count == 1
            and _cased(text)
            and all(w.text == w.lowered and self._english(w.standard) for w in window)
        ):
            return "determiner"
        if not named and self._inflected(window, name):
            return "inflected"
        for edge, rest in ((window[0], window[1:]), (window[-1], window[:-1])):
            if edge.lowered in FUNCTION_WORDS:
                rest_key = "".join(w.key for w in rest)
                if similarity(rest_key, phonetic_codes(rest_key), name) > score - (
                    self.settings.edge_margin
                ):
                    return "loose edge"
        return None

    def _another_name(self, text: str, window: list[Word], name: PreparedName) -> bool:
        """Whether the one word that carries the window is a name English knows, written as
        a name inside a sentence: someone the transcriber knew, a player or a friend ("Is
        Corinne coming tonight?" with Corrin Whitlock), not a given name or surname alone
        misheard; nor a one-word name when it is a name said every day ("Is Dave in
        tonight?" with Davin; but "Did Griselda ever get back to us?" may be Grisolde). A
        capital that starts a sentence says nothing (see `_guard` for a name addressed)."""
        content = [w for w in window if w.lowered not in FUNCTION_WORDS | FILLERS]
        if len(content) != 1:
            return False
        word = content[0]
        if not word.text[:1].isupper() or _starts_sentence(text, word.start):
            return False
        if name.full is not None:
            return frequency(word.standard) > 0
        return self._common(word.standard)

    def _form_guard(
        self,
        text: str,
        window: list[Word],
        before: str | None,
        after: str | None,
        named: bool,
    ) -> Guard | None:
        """What keeps English words from being heard as a surname or given name alone: an
        English word alone ("Bastion walls hold" is no Bastian; one common or not, as
        "bastion" is rare), and see `_ordinary_for_a_form`."""
        if before == "the":
            return "determiner"
        if len(window) == 1:
            word = window[0]
            plain = word.text == word.lowered or _starts_sentence(text, word.start)
            return "common word" if plain and self._english(word.standard) else None
        if not named and _cased(text) and self._lower_case_english(text, window):
            return "everyday words"
        if not named and self._everyday_phrase(text, window):
            return "everyday words"
        if self._english_phrase_edge(window, after):
            return "loose edge"
        return None

    def _inflected(self, window: list[Word], name: PreparedName) -> bool:
        """An everyday phrase with an inflection that the name does not have is ordinary
        grammar: "nine folded letters", "the cinders hold", "the tide turns". Not when the
        name has the ending too ("elms gate" for Ulmsgate), nor when the rest is no everyday
        phrase ("ashgrove circles")."""
        stem_floor = self.settings.inflection_stem_per_million
        counterparts = _word_for_word(window, name)
        for word in window:
            suffix = inflection(word.standard, stem_floor)
            if suffix is None or word.lowered in name.words:
                continue
            # The ending with a sound before it: one letter alike says nothing.
            if word.key[-len(suffix) - 2 :] in name.key:
                continue
            # The name's word in its place is this word misheard, ending alike: "crown of
            # reads" (Crown of Reeds), not "old habits" (Old Debts).
            counterpart = counterparts.get(id(word))
            if (
                counterpart is not None
                and (
                    counterpart.endswith(word.key[-len(suffix) - 1 :])
                    # "-es" is how "-s" is spelled after some words: "silent belles"
                    # (Silent Bells).
                    or (suffix == "es" and counterpart.endswith("s"))
                )
                and Indel.normalized_similarity(word.key, counterpart) >= MISHEARD_WORD_LETTERS
            ):
                continue
            if all(
                self._common(other.standard)
                for other in window
                if other is not word and other.lowered not in FUNCTION_WORDS
            ):
                return True
        return False


def _word_for_word(window: list[Word], name: PreparedName) -> dict[int, str]:
    """The name's words paired with the words heard, when they are as many (function words
    and fillers aside): id of the word heard -> the letters of the name's word."""
    heard = [w for w in window if w.lowered not in FUNCTION_WORDS and w.lowered not in FILLERS]
    own = [letters(w) for w in name.name.text.split() if w.casefold() not in FUNCTION_WORDS]
    if len(heard) != len(own) or len(own) < 2:
        return {}
    return {id(w): o for w, o in zip(heard, own, strict=True)}


def _cased(text: str) -> bool:
    return any(ch.isupper() for ch in text)


def _written_lower(text: str, window: list[Word]) -> bool:
    """Whether the words (function words aside) are in lower case, but for the capital a
    sentence starts with, which says nothing of a name ("Silent bells hang in the tower"),
    unless the words are called out ("Fen right, hold the door!")."""
    called_out = text[window[-1].end : window[-1].end + 1] == ","
    return all(
        w.text == w.lowered or (k == 0 and not called_out and _starts_sentence(text, w.start))
        for k, w in enumerate(window)
        if w.lowered not in FUNCTION_WORDS
    )


def _starts_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in '.!?"\u201c'


def _apply(text: str, corrections: Iterable[NameCorrection]) -> str:
    out = text
    for c in sorted(corrections, key=lambda c: -c.start):
        out = out[: c.start] + c.entity + out[c.end :]
    return out
