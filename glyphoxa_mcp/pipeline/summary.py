"""The offline session summary: per scene, where and who, then what happened, what was
decided, promised and revealed, in short third-person sentences. (pure but for `summarise`,
which embeds the sentences)

Lines are chosen by what they carry, not by how rare their words are: how central a
sentence is among the scene's (cosine to the mean of the embedder's vectors), the names and
content words it holds, and cues of decisions, promises and revelations; questions and
pleasantries weigh little. Chosen greedily with maximal marginal relevance (a sentence much
like one already chosen gains little) until the scene's share of the word budget is spent,
then told in the order they were said. A line is retold as its speaker's (the first person
becomes the speaker, "you" the one spoken to when it is clear who that is), and quoted only
when it cannot be retold safely. Every tie is broken by the order of the lines, so the same
lines give the same summary in every process.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import numpy as np

from glyphoxa_mcp.domain.scenes import Scene, scene_groups
from glyphoxa_mcp.domain.session_summaries import SummaryPart
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern

NOTHING_SAID = "Nothing was said in this session."
# Words per session the summary aims at (a scene gets its share by its sentences), and the
# least a scene gets: enough for where and who and one line.
WORD_BUDGET = 110
MIN_SCENE_WORDS = 24
MIN_WORDS = 4
# Maximal marginal relevance: the weight of a sentence's own score against its likeness to
# what was chosen.
RELEVANCE = 0.7
QUESTION_WEIGHT = 0.25
# A sentence scoring below this share of the scene's best is not told, even with words to
# spare: a short scene is not filled up with its questions and pleasantries.
LEAST_SHARE = 0.5
PLEASANTRY_WEIGHT = 0.4

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


DECISION_CUES = _words("decide decided decides agree agreed agrees deal let's plan plans planned")
PROMISE_CUES = _words(
    "promise promised promises swear swore vow vowed owe owes pay will i'll we'll"
)
REVEAL_CUES = _words(
    "reveal revealed secret truth actually found discovered learned turns killed died stolen "
    "lost news"
)
CUES = DECISION_CUES | PROMISE_CUES | REVEAL_CUES
STOP = _words(
    "the a an and or but of to in on at for with is are was were be been being it its it's "
    "this that these those i i'm i've i'll i'd you you're you've your we we're our us me my "
    "he she him her his they them their there here what who how why where when then so if "
    "as by from have has had do does did not no yes just also too very really so much many "
    "some any all can could would should will shall may might must get got about up out "
    "into over than like one im ive dont don't didn't that's what's can't won't"
)
PLEASANTRIES = _words(
    "hi hey hello bye goodbye thanks thank cheers congrats congratulations awesome amazing "
    "great cool wow nice glad happy sounds lovely wonderful fantastic sweet haha lol yeah "
    "yep totally love care good luck fun proud sure excited appreciate means"
)
# Speakers who narrate rather than take part: the game master under the usual names.
NARRATORS = frozenset(("dm", "gm", "game master", "dungeon master", "narrator"))
INTERJECTIONS = _words(
    "hey hi hello oh ah wow yeah yes yep no nope well so hmm haha lol thanks okay ok "
    "sure totally absolutely right aw aww omg man dude cool great awesome"
)
# Verbs whose present tense takes an -s after a third-person subject; a word not listed
# after "I" is taken as it stands (mostly a past tense: "I found", "I went").
BASE_VERBS = _words(
    "love like want need think feel know hope wish believe remember see hear go come make "
    "take give get keep try plan mean guess work live play paint run read write enjoy miss "
    "agree promise swear owe pay find say tell ask look seem prefer hate understand "
    "appreciate admire spend volunteer teach learn study help bring buy sell carry hold "
    "owe trust doubt fear dream recommend suggest practice practise cook bake collect "
    "visit use start stop care"
)
ADVERBS = _words(
    "just really also always never actually finally recently still often usually totally "
    "definitely completely truly honestly sometimes already even"
)
FIRST_PERSON = {
    "me": "them",
    "my": "their",
    "mine": "theirs",
    "myself": "themself",
    "we": "they",
    "us": "them",
    "our": "their",
    "ours": "theirs",
    "ourselves": "themselves",
}


class SpokenLine(Protocol):
    """What the summary reads of a transcript line (an `Entry` is one)."""

    @property
    def speaker_name(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def spoken_at(self) -> datetime: ...


@dataclass(frozen=True)
class Sentence:
    order: int
    scene: int
    speaker: str
    text: str


@dataclass(frozen=True)
class Chosen:
    sentence: Sentence
    score: float


def sentences_of(lines: Sequence[SpokenLine], scenes: Sequence[Scene] = ()) -> list[Sentence]:
    """The sentences worth weighing (at least `MIN_WORDS` words), in the order said, each
    with the index of its group in `scene_groups(scenes, lines)`."""
    found: list[Sentence] = []
    for index, (_, said) in enumerate(scene_groups(scenes, lines, _spoken_at)):
        for line in said:
            for match in _SENTENCE.finditer(_ASIDE.sub("", line.text)):
                text = match.group(0).strip()
                if len(_WORD.findall(text)) >= MIN_WORDS:
                    found.append(Sentence(len(found), index, line.speaker_name, text))
    return found


def _spoken_at(line: SpokenLine) -> datetime:
    return line.spoken_at


async def summarise(
    lines: Sequence[SpokenLine],
    scenes: Sequence[Scene],
    embedder: Embedder | None,
    known: NamePattern,
    names_of: dict[str, str],
    budget: int = WORD_BUDGET,
) -> list[SummaryPart]:
    """The session's summary parts, one per scene, its sentences embedded by `embedder`
    (None, where none is at hand: by their words, TF-IDF)."""
    sentences = sentences_of(lines, scenes)
    if embedder is None or not sentences:
        vectors = lexical_vectors(sentences)
    else:
        vectors = await embedder.embed([s.text for s in sentences])
    return summary_parts(lines, scenes, sentences, vectors, known, names_of, budget)


def lexical_vectors(sentences: Sequence[Sentence]) -> list[list[float]]:
    """Unit TF-IDF vectors of the sentences' content words. (pure)"""
    words = [Counter(_content(s.text)) for s in sentences]
    documents = Counter(w for counts in words for w in counts)
    vocabulary = {w: i for i, w in enumerate(sorted(documents))}
    vectors = []
    for counts in words:
        vector = [0.0] * max(len(vocabulary), 1)
        for word, count in counts.items():
            vector[vocabulary[word]] = count * math.log((1 + len(words)) / documents[word])
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        vectors.append([x / norm for x in vector])
    return vectors


def summary_parts(
    lines: Sequence[SpokenLine],
    scenes: Sequence[Scene],
    sentences: Sequence[Sentence],
    vectors: Sequence[Sequence[float]],
    known: NamePattern,
    names_of: dict[str, str],
    budget: int = WORD_BUDGET,
) -> list[SummaryPart]:
    """The summary parts of `lines`, given `sentences_of(lines, scenes)` and their unit
    vectors in the same order. (pure)"""
    if not lines:
        return [SummaryPart(text=NOTHING_SAID, gist=NOTHING_SAID)]
    groups = scene_groups(scenes, lines, _spoken_at)
    total = max(len(sentences), 1)
    parts = []
    for index, (scene, said) in enumerate(groups):
        if not said:
            continue
        mine = [(s, v) for s, v in zip(sentences, vectors, strict=True) if s.scene == index]
        share = max(MIN_SCENE_WORDS, round(budget * len(mine) / total))
        parts.append(_part(scene, said, mine, known, names_of, share))
    return parts


def _part(
    scene: Scene | None,
    said: Sequence[SpokenLine],
    sentences: Sequence[tuple[Sentence, Sequence[float]]],
    known: NamePattern,
    names_of: dict[str, str],
    budget: int,
) -> SummaryPart:
    speakers = list(dict.fromkeys(line.speaker_name for line in said))
    players = [s for s in speakers if not is_narrator(s)] or speakers
    setting = _setting(scene, said[0].spoken_at, players, names_of)
    names = frozenset(speakers) | frozenset(names_of.values())
    told = {s.order: retell(s, speakers, names) for s, _ in sentences}
    chosen = choose(
        sentences, known, budget - len(setting.split()), lambda s: len(told[s.order].split())
    )
    retold = [told[c.sentence.order] for c in chosen]
    text = " ".join([setting, *retold])
    return SummaryPart(
        scene_started_at=scene.started_at if scene else None,
        text=text,
        gist=_gist(scene, players, [s for s, _ in sentences], known, names_of),
    )


def _listed(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _setting(
    scene: Scene | None, start: datetime, speakers: Sequence[str], names_of: dict[str, str]
) -> str:
    """Where and who: the scene's place and title, the day, who spoke and who else was there."""
    when = f"On {start.day} {start:%B %Y}"
    where = ""
    if scene is not None and scene.location_id is not None:
        where = f" at {names_of.get(scene.location_id, scene.location_id)}"
    title = f" ({scene.title})" if scene is not None and scene.title else ""
    present = [
        names_of.get(i, i)
        for i in (scene.present if scene else ())
        if names_of.get(i, i) not in speakers
    ]
    text = f"{when}{where}{title}, {_listed(speakers)} spoke"
    if present:
        text += f"; {_listed(present)} {'was' if len(present) == 1 else 'were'} there too"
    return text + "."


def _content(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOP and len(w) > 2]


def _names_in(sentence: Sentence, known: NamePattern) -> int:
    """Known entities named, and capitalised words past the first that are not "I"."""
    words = _WORD.findall(sentence.text)
    capitalised = sum(
        1 for w in words[1:] if w[0].isupper() and w != "I" and not w.startswith("I'")
    )
    return len(known.owners_in(sentence.text)) + capitalised


def score(sentence: Sentence, centrality: float, known: NamePattern) -> float:
    """How much a sentence carries: centrality, names, content words and cues; a question or
    a pleasantry weighs less."""
    content = _content(sentence.text)
    lowered = _words(sentence.text)
    value = (
        centrality
        + 0.15 * min(_names_in(sentence, known), 3)
        + 0.12 * math.log1p(len(content))
        + 0.1 * min(len(CUES & lowered), 2)
    )
    if sentence.text.rstrip().endswith("?"):
        value *= QUESTION_WEIGHT
    if content and sum(w in PLEASANTRIES for w in content) / len(content) >= 0.4:
        value *= PLEASANTRY_WEIGHT
    return value


def choose(
    sentences: Sequence[tuple[Sentence, Sequence[float]]],
    known: NamePattern,
    budget: int,
    length: Callable[[Sentence], int] = lambda s: len(s.text.split()),
) -> list[Chosen]:
    """The sentences told, in the order said: by score with maximal marginal relevance,
    until `budget` words (as `length` counts a sentence's) are spent (at least one
    sentence)."""
    if not sentences:
        return []
    vectors = np.asarray([v for _, v in sentences], dtype=np.float64)
    centre = vectors.sum(axis=0)
    centre /= float(np.linalg.norm(centre)) or 1.0
    centrality = vectors @ centre
    likeness = vectors @ vectors.T
    scored = [score(s, float(c), known) for (s, _), c in zip(sentences, centrality, strict=True)]
    closest = np.zeros(len(sentences))
    remaining = list(range(len(sentences)))
    picked: list[int] = []
    spent = 0
    while remaining:
        # Ties go to the sentence said first.
        best = min(
            remaining,
            key=lambda i: (-(RELEVANCE * scored[i] - (1 - RELEVANCE) * closest[i]), i),
        )
        remaining.remove(best)
        words = length(sentences[best][0])
        if picked and (spent + words > budget or scored[best] < LEAST_SHARE * max(scored)):
            continue
        picked.append(best)
        spent += words
        closest = np.maximum(closest, likeness[best])
    return [Chosen(sentences[i][0], scored[i]) for i in sorted(picked)]


# --- retelling a line in the third person ----------------------------------------------

_SPOKEN_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_ASIDE = re.compile(r"\s*\[[^\]]*\]")
# A subject's contraction as the words it stands for.
CONTRACTED = {"'m": "am", "'ve": "have", "'ll": "will", "'d": "would", "'re": "are"}
THIRD_PERSON_FORMS = {
    "am": "is",
    "are": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
    "weren't": "wasn't",
}
PLURAL_FORMS = {"am": "are", "was": "were", "wasn't": "weren't"}
COMMANDS = BASE_VERBS | _words("pay bring give go take put leave wait meet follow open stay")


def _third_person(verb: str) -> str:
    if verb in THIRD_PERSON_FORMS:
        return THIRD_PERSON_FORMS[verb]
    if verb in ("go", "do"):
        return verb + "es"
    if re.search(r"(s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


@dataclass(frozen=True)
class _Opening:
    rest: str
    addressed: str | None


def _opening(text: str) -> _Opening:
    """The sentence past its leading interjections ("Yeah,", "Oh wow,", "Hey Mel!") and a
    name addressed ("Dorn, ..."), with that name."""
    addressed = None
    while True:
        match = re.match(r"^\s*((?:[A-Za-z']+\s*){1,3})[,!:]\s*(.*)$", text, re.DOTALL)
        head = match.group(1).split() if match else []
        if not match or not match.group(2).strip():
            break
        spoken = [w for w in head if w.lower() not in INTERJECTIONS]
        if (
            len(spoken) < len(head)
            and head[0].lower() in INTERJECTIONS
            and (not spoken or all(w[:1].isupper() for w in spoken))
        ):
            addressed = " ".join(spoken) or addressed
        elif head and len(head) <= 2 and all(w[:1].isupper() for w in head) and head != ["I"]:
            addressed = " ".join(head)
        else:
            break
        text = match.group(2)
    words = text.split()
    while len(words) > MIN_WORDS and words[0].lower().strip(",") in INTERJECTIONS:
        words = words[1:]
    return _Opening(" ".join(words), addressed)


def is_narrator(speaker: str) -> bool:
    return speaker.casefold() in NARRATORS


def retell(sentence: Sentence, speakers: Sequence[str], names: frozenset[str] = frozenset()) -> str:
    """The sentence as its speaker's, in the third person; quoted when "you" has no one
    clear to stand for, or when it is a question. The narrator's lines (the DM's) are told
    as they are, "you" being the party."""
    speaker = sentence.speaker
    opening = _opening(_ASIDE.sub("", sentence.text).strip())
    others = [s for s in speakers if s != speaker]
    listener = opening.addressed or (others[0] if len(others) == 1 else None)
    text = opening.rest.rstrip()
    if is_narrator(speaker) and not text.endswith("?"):
        told = _shift(re.sub(r"[!.]*$", ".", text, count=1), speaker, "the party", names, True)
        return _capital(told)
    words = [m.group(0).lower() for m in _SPOKEN_WORD.finditer(text)]
    if (
        not words
        or text.endswith("?")
        or (
            listener is None and {"you", "your", "yours", "you're", "you've", "you'll"} & set(words)
        )
    ):
        return f"{speaker} said, \u201c{sentence.text.strip()}\u201d"
    text = re.sub(r"[!.]*$", ".", text, count=1)
    known = names | {speaker} | ({listener} if listener else set())
    first = words[0]
    if first in ("i", "we") and len(words) > 2 and words[1] in _PROMISE_VERBS:
        # "We promise to find it." -> "Kael promised to find it."
        rest = text.split(" ", 2)[2]
        return f"{speaker} promised {_shift(rest, speaker, listener, known, True)}"
    if opening.addressed and first in COMMANDS:
        # "Dorn, pay the man." -> "Tamsin told Dorn to pay the man."
        return (
            f"{speaker} told {opening.addressed} to {_shift(text, speaker, listener, known, True)}"
        )
    if first == "let's":
        rest = _shift(text.split(" ", 1)[1] if " " in text else "", speaker, listener, known, True)
        return f"{speaker} suggested they {rest}"
    if first in ("i", "i'm", "i've", "i'll", "i'd"):
        return _capital(_shift(text, speaker, listener, known, False))
    verb = "promised" if _PROMISED.search(text) else "said"
    return f"{speaker} {verb} {_shift(text, speaker, listener, known, True)}"


_PROMISE_VERBS = _words("promise swear vow")
_PROMISED = re.compile(r"\b(promise|swear|vow|give you my word)\b", re.IGNORECASE)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _shift(
    text: str, speaker: str, listener: str | None, known: set[str] | frozenset[str], named: bool
) -> str:
    """First person to the speaker (the first "I" by name unless `named`, the others as
    "they"), second to the listener, the verbs after them agreeing; the first word in lower
    case unless it is a name."""
    matches = list(_SPOKEN_WORD.finditer(text))
    replaced: dict[int, str] = {}
    agree_at: dict[int, bool] = {}  # word index -> singular subject
    for index, match in enumerate(matches):
        word = match.group(0)
        lowered = word.lower()
        stem, _, tail = lowered.partition("'")
        contraction = f"'{tail}" if tail else ""
        if stem == "i" and (not contraction or contraction in CONTRACTED):
            subject = "they" if named else speaker
            named = True
            singular = subject != "they"
            if contraction:
                expanded = CONTRACTED[contraction]
                replaced[index] = f"{subject} {_agreeing(expanded, singular)}"
            else:
                replaced[index] = subject
                agree_at[_verb_after(matches, index)] = singular
        elif stem == "you" and listener and contraction in ("", *CONTRACTED):
            if contraction:
                replaced[index] = f"{listener} {_agreeing(CONTRACTED[contraction], True)}"
            else:
                replaced[index] = listener
                following = _verb_after(matches, index)
                if (
                    following < len(matches)
                    and matches[following].group(0).lower()
                    in (THIRD_PERSON_FORMS.keys() | BASE_VERBS)
                    and (index == 0 or matches[index - 1].group(0).lower() not in _OBJECT_BEFORE)
                ):
                    agree_at[following] = True
        elif lowered in ("your", "yours") and listener:
            replaced[index] = f"{listener}'s"
        elif lowered == "yourself" and listener:
            replaced[index] = listener
        elif lowered in FIRST_PERSON:
            replaced[index] = FIRST_PERSON[lowered]
        elif lowered in ("we're", "we've", "we'll", "we'd"):
            replaced[index] = f"they {_agreeing(CONTRACTED[contraction], False)}"
        if index in agree_at and index not in replaced:
            replaced[index] = _agreeing(lowered, agree_at[index])
    pieces, last = [], 0
    for index, match in enumerate(matches):
        if index in replaced:
            pieces += [text[last : match.start()], replaced[index]]
            last = match.end()
    pieces.append(text[last:])
    told = "".join(pieces).strip()
    first = told.split(" ", 1)[0].strip(",.;:")
    if first and first not in known and first.rstrip("'s") not in known and not first.isupper():
        told = told[:1].lower() + told[1:]
    return told


_OBJECT_BEFORE = _words("to for with at about thank thanks tell told see saw help let make")


def _verb_after(matches: Sequence[re.Match[str]], index: int) -> int:
    following = index + 1
    while following < len(matches) and matches[following].group(0).lower() in ADVERBS:
        following += 1
    return following


def _agreeing(verb: str, singular: bool) -> str:
    if not singular:
        return PLURAL_FORMS.get(verb, verb)
    if verb in THIRD_PERSON_FORMS or verb in BASE_VERBS:
        return _third_person(verb)
    return verb


# --- the gist: what someone who was not there heard of it -------------------------------


def _topical(word: str) -> bool:
    """A word that may name what a scene was about: not a pleasantry, a common verb or a
    verb's past or -ing form."""
    return (
        word not in PLEASANTRIES
        and word not in COMMANDS
        and word not in INTERJECTIONS
        and not word.endswith(("ed", "ing"))
        and word.removesuffix("s") not in COMMANDS
        and word.removesuffix("es") not in COMMANDS
    )


def _gist(
    scene: Scene | None,
    speakers: Sequence[str],
    sentences: Sequence[Sentence],
    known: NamePattern,
    names_of: dict[str, str],
) -> str:
    """One sentence, quoting nothing: who, where, and the names and words the scene's
    lines return to most."""
    named = Counter(
        names_of.get(owner, owner)
        for s in sentences
        for owner in dict.fromkeys(known.owners_in(s.text))
    )
    place = names_of.get(scene.location_id, "") if scene and scene.location_id else ""
    topics = [
        name
        for name, _ in sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))
        if name not in speakers and name != place
    ][:2]
    words = Counter(
        w for s in sentences if not s.text.rstrip().endswith("?") for w in set(_content(s.text))
    )
    taken = {w for name in [*topics, *speakers, place] for w in _words(name)}
    common = [
        w
        for w, count in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))
        if count > 1 and len(w) > 3 and "'" not in w and _topical(w) and w not in taken
    ]
    topics += common[: 4 - len(topics)]
    where = ""
    if scene is not None and scene.location_id is not None:
        where = f" at {names_of.get(scene.location_id, scene.location_id)}"
    about = f" about {_listed(topics)}" if topics else ""
    verb = "talked" if len(speakers) > 1 else "spoke"
    return f"{_listed(speakers)} {verb}{where}{about}."
