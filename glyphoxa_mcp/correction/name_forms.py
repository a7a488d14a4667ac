"""The shorter forms a person's name is said in. (pure)

Players rarely say "Captain Tobiah Grell" twice: they say "Grell", "Captain Grell", "Tobiah
Grell", or call "Tobiah, ..." across the table. Each of those is a name to restore when
speech-to-text garbles it ("captain grel"), spelled as the full name spells it. A form is
made of the words that tell one person from another (given names and surnames), optionally
after the title that leads the name: never a title alone ("Captain"), a function word
("of"), or an everyday word ("Tobin Hill" is never "Hill"), which would turn ordinary speech
into a name.

Whose name is a person's: the caller says so when it knows the entity's type (an NPC, a
player's character); otherwise a name counts as a person's when it is a title of a person
and a word that is not everyday English ("Sister Anwyn Tull", "Warden Tibalt Crane"), a
title that also leads places' names and only such words ("Old Berrit"; not "Old Salt
Caves", "Saint Orrick's Well"), or two words or more that English does not know at all
("Quillon Darrow"), which places ("Port Ledrin", "Greywater Crossing"), items ("Lantern of
Osk", "Blackbriar Lute") and factions ("Cobalt Hand") are not.
"""

from __future__ import annotations

from glyphoxa_mcp.correction.english import FUNCTION_WORDS, frequency
from glyphoxa_mcp.correction.words import letters

# Words that lead a person's name and tell a rank, a calling or a kinship rather than who.
_TITLES = """
captain sister brother mother father lord lady sir dame master mistress old young elder
king queen prince princess duke duchess baron baroness count countess earl marquis
abbot abbess bishop friar prior priest priestess reverend deacon saint st
doctor dr magister archmage maester general commander sergeant lieutenant marshal warden
granny grandmother grandfather uncle aunt auntie mister mr mrs ms madam madame
chief chieftain jarl thane emperor empress regent sheriff mayor high grand
"""
TITLES = frozenset(_TITLES.split())
# Titles that lead the names of places as well as people's: "Old Town", "High Tarn",
# "Grand Bazaar", "Saint Orrick's Well".
PLACE_TITLES = frozenset(["old", "young", "elder", "high", "grand", "saint", "st"])
# A word this frequent in speech is English ("lute", "ashen", "vale"), not a word a name
# is recognised by; names English does not know sit below (0.03: one stray use).
ENGLISH_PER_MILLION = 0.05
# A word this frequent is everyday English ("Vale", "Crossing"): never a form of its own.
EVERYDAY_PER_MILLION = 0.6
MIN_LETTERS = 3
# Names of more words than this after their title are not split (their forms would multiply).
MAX_NAME_WORDS = 3


def distinctive(word: str, below: float = EVERYDAY_PER_MILLION) -> bool:
    """A word that tells one person from another: not a title, a function word or an
    everyday word (`below`: the frequency per million it stays under)."""
    lowered = word.casefold()
    return (
        len(letters(word)) >= MIN_LETTERS
        and lowered not in FUNCTION_WORDS
        and lowered not in TITLES
        and frequency(lowered) < below
    )


def _leading_titles(words: list[str]) -> int:
    count = 0
    while count < len(words) and words[count].casefold() in TITLES:
        count += 1
    return count


def looks_like_a_person(text: str) -> bool:
    """A person's title and then a word that is not everyday English, with no function word
    ("Warden Tibalt Crane"; not "Lady of the Lake", "Captain Sunday"); a title that may lead
    a place's name and then only such words ("Old Berrit"; not "Old Salt Caves"); or two
    words or more that English does not know at all ("Quillon Darrow"; not "Blackbriar
    Lute")."""
    words = text.split()
    titles = _leading_titles(words)
    rest = words[titles:]
    if not rest or len(words) < 2:
        return False
    if titles and any(w.casefold() in PLACE_TITLES for w in words[:titles]):
        return all(distinctive(w) for w in rest)
    if titles:
        return any(distinctive(w) for w in rest) and not any(
            w.casefold() in FUNCTION_WORDS for w in rest
        )
    return all(distinctive(w, ENGLISH_PER_MILLION) for w in rest)


def short_forms(text: str, person: bool | None = None) -> tuple[str, ...]:
    """The forms a person's name is said in: each given name and surname alone, each word of
    the name after the title it leads with ("Sergeant Brisk", though "brisk" alone is an
    everyday word), and the name without its title. Nothing for a name of one word, one
    without a word that tells the person apart, or one that is not a person's (`person`;
    None: judged from the name)."""
    words = text.split()
    if len(words) < 2 or not (looks_like_a_person(text) if person is None else person):
        return ()
    leading = _leading_titles(words)
    title = " ".join(words[:leading])
    named = [
        w
        for w in words[leading:]
        if len(letters(w)) >= MIN_LETTERS and w.casefold() not in FUNCTION_WORDS | TITLES
    ]
    alone = [w for w in named if distinctive(w)]
    if not alone or len(named) > MAX_NAME_WORDS:
        return ()
    forms = list(alone)
    if title:
        forms += [f"{title} {word}" for word in named]
        if len(named) > 1:
            forms.append(" ".join(named))
    elif len(alone) > 1:
        forms.append(" ".join(alone))
    return tuple(f for f in dict.fromkeys(forms) if f != text)
