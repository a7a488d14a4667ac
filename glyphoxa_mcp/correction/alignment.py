"""Whether a multi-word name and the words heard for it match word for word. (pure)

A window is matched to a name by the letters and sounds of the whole, which a long name
with one word misheard still passes ("Sister Annwen Tull"). The same leniency lets ordinary
words share half a name and pass too: "sunk near" has most of the letters of "Sunken Verge"
and nothing that sounds like "Verge"; "salt cellar" has "Salt" and a long word that is not
"Law". So the window's letters are aligned with the name's, and each word that carries the
name is compared with what was heard in its place, and each word heard with the part of the
name in its place. A name of one word is not checked so: speech-to-text splits it anywhere
("ice keld", "cause a mere").
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import Indel, Levenshtein, Opcodes

from glyphoxa_mcp.correction.english import FILLERS, FUNCTION_WORDS
from glyphoxa_mcp.correction.name_index import PreparedName, phonetic_codes
from glyphoxa_mcp.correction.words import Word, letters


def weakest_word(heard: Sequence[Word], name: PreparedName) -> float:
    """How alike the least well matched word is to its counterpart, the name's words and
    the words heard taken in turn (1.0 for a name of one word). Function words and fillers
    heard ("and", "uh") need no counterpart: "quill and darrow", "Port, uh, Ledrin"."""
    if not name.word_spans:
        return 1.0
    heard_key = "".join(w.key for w in heard)
    opcodes = Levenshtein.opcodes(name.key, heard_key)
    weakest = 1.0
    for start, end in name.word_spans:
        weakest = min(
            weakest, _alike(name.key[start:end], _counterpart(opcodes, start, end, heard_key, True))
        )
    bounds = []
    at = 0
    for word in heard:
        bounds.append((at, at + len(word.key)))
        at += len(word.key)
    homes = [_home(opcodes, start, end, name.word_spans) for start, end in bounds]
    for k, word in enumerate(heard):
        if word.lowered in FUNCTION_WORDS or word.lowered in FILLERS:
            continue
        # One word of the name heard as two ("Eye Drun" for Idrun): the name's word was
        # compared with both together above, and a piece alone may be a homophone ("eye").
        neighbours = homes[k - 1 : k] + homes[k + 1 : k + 2]
        if homes[k] is not None and homes[k] in neighbours:
            continue
        start, end = bounds[k]
        weakest = min(weakest, _alike(word.key, _counterpart(opcodes, start, end, name.key, False)))
    return weakest


def adds_a_word(heard: Sequence[Word], name: PreparedName) -> bool:
    """Whether a function word inside the window stands for none of the name's letters: "grim
    and bald" adds "and" to Grimbald, where "quill and darrow" hears "and" for the "on" of
    Quillon Darrow. Speech-to-text splits a name into words, but the words are made of the
    name's sounds; a filler ("Port, uh, Ledrin") is the speaker's, not the name's."""
    inner = [
        k
        for k in range(1, len(heard) - 1)
        if heard[k].lowered in FUNCTION_WORDS and heard[k].lowered not in FILLERS
    ]
    if not inner:
        return False
    heard_key = "".join(w.key for w in heard)
    opcodes = Levenshtein.opcodes(name.key, heard_key)
    starts = [0]
    for word in heard:
        starts.append(starts[-1] + len(word.key))
    return any(not _counterpart(opcodes, starts[k], starts[k + 1], name.key, False) for k in inner)


def _home(opcodes: Opcodes, start: int, end: int, spans: Sequence[tuple[int, int]]) -> int | None:
    """Which of the name's words (`spans` of its letters) all the letters aligned with
    [start, end) of what was heard fall in, if one does."""
    first: int | None = None
    last = 0
    for op in opcodes:
        if op.tag == "delete" or op.tag == "insert":
            continue
        low, high = max(op.dest_start, start), min(op.dest_end, end)
        if low < high:
            if first is None:
                first = op.src_start + low - op.dest_start
            last = op.src_start + high - op.dest_start
    if first is None:
        return None
    return next((n for n, (s, e) in enumerate(spans) if s <= first and last <= e), None)


def _counterpart(opcodes: Opcodes, start: int, end: int, other: str, from_name: bool) -> str:
    """The letters of `other` aligned with [start, end) of the name (from_name) or of what
    was heard: equal and replaced letters pair one to one."""
    first: int | None = None
    last = 0
    for op in opcodes:
        if op.tag == "delete" or op.tag == "insert":
            continue
        if from_name:
            own_start, own_end, other_start = op.src_start, op.src_end, op.dest_start
        else:
            own_start, own_end, other_start = op.dest_start, op.dest_end, op.src_start
        low, high = max(own_start, start), min(own_end, end)
        if low < high:
            if first is None:
                first = other_start + low - own_start
            last = other_start + high - own_start
    return other[first:last] if first is not None else ""


def _alike(word: str, counterpart: str) -> float:
    """By sound and by spelling, as whole windows are compared (name_index.similarity)."""
    if not counterpart:
        return 0.0
    by_sound = max(
        (
            Indel.normalized_similarity(a, b)
            for a in phonetic_codes(word)
            for b in phonetic_codes(counterpart)
        ),
        default=0.0,
    )
    return (by_sound + Indel.normalized_similarity(word, counterpart)) / 2


def unheard_edges(name: PreparedName, heard_key: str) -> tuple[int, int]:
    """How many of the name's letters at its start and at its end nothing heard stands for:
    "sister ven" leaves "nacht" of "Sister Vennacht" unheard (0, 5)."""
    opcodes = Levenshtein.opcodes(name.key, heard_key)
    if not opcodes:
        return 0, 0
    first, last = opcodes[0], opcodes[-1]
    head = first.src_end - first.src_start if first.tag == "delete" else 0
    tail = last.src_end - last.src_start if last.tag == "delete" else 0
    return head, tail


def rest_heard_beside(
    name: PreparedName, before: Sequence[Word], after: Sequence[Word], floor: float
) -> bool:
    """For a shorter form of a name ("Captain Tobiah" of Captain Tobiah Grail), whether the
    words heard next to it sound like the words of the full name on that side ("a grell"
    after it): the form is then only part of the name heard, not a name of its own. A
    function word or a filler between them is passed over."""
    if name.full is None:
        return False
    full = name.full.split()
    own = [w.casefold() for w in name.name.text.split()]
    lowered = [w.casefold() for w in full]
    if own[0] not in lowered or own[-1] not in lowered:
        return False
    first, last = lowered.index(own[0]), len(lowered) - 1 - lowered[::-1].index(own[-1])
    sides = ((full[last + 1 :], list(after)), (full[:first][::-1], list(before)[::-1]))
    for rest, heard in sides:
        wanted = [letters(w) for w in rest if w.casefold() not in FUNCTION_WORDS]
        if not wanted:
            continue
        near = _content_words(heard, len(wanted))
        if len(near) == len(wanted) and _alike("".join(wanted), "".join(near)) >= floor:
            return True
    return False


def _content_words(heard: list[Word], count: int, skip: int = 1) -> list[str]:
    """The first `count` words heard, passing over up to `skip` function words or fillers
    before them."""
    at = 0
    while at < len(heard) and at < skip and heard[at].lowered in FUNCTION_WORDS | FILLERS:
        at += 1
    return [w.key for w in heard[at : at + count]]
