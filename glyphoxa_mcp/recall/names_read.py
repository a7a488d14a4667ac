"""What name correction reads in a text: the entities whose names it would put back into it,
as it is written and as it reads in Latin letters (`names_read`). Redaction withholds a text
that reads a name hidden from its viewer (redaction.py). (pure)

Working that out takes 0.3-1.3 ms a text, and a server read by many NPCs meets hundreds of
texts a second that it has not read since it started (a fifth of its processor under load).
So what was read is kept in the database too (storage/names_read_cache.py, sql/039), under a
digest (`reading_of`) of
- the corrector's names and settings, and the code and word lists that read them
  (`names_digest`): another name, setting, or version of this package or of a library that
  reads names gives every text another key, so nothing read under them is ever used;
- the text itself.
A row found is therefore right by construction: there is nothing to invalidate. A view asks
for the readings of the texts it is about to check that this process has not read
(`unread`), teaches the process what the database keeps (`learn`), and keeps what it had to
work out itself (views/names_ahead.py).
"""

from __future__ import annotations

import hashlib
import sys
import unicodedata
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import TypeVar
from weakref import WeakKeyDictionary

import glyphoxa_mcp.correction as correction_package
from glyphoxa_mcp.correction.known_names import corrects_like
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.recall import name_spelling
from glyphoxa_mcp.recall.name_spelling import fold

# Texts a corrector has read, shared by every viewer: enough for every fact and the recent
# lines of a large campaign (20,000 facts at reference scale; at 16,384 under 64 clients,
# three texts in five were read again). An answer is a tuple of ids, most empty: about 20 MB
# when full.
READ_TEXTS = 65_536
# The libraries whose data or code decide what is read: the word frequencies, the sound
# codes, the string distances and the arrays they are kept in.
READING_LIBRARIES = ("pyspellchecker", "jellyfish", "rapidfuzz", "numpy")
DIGEST_BYTES = 16

K = TypeVar("K")
V = TypeVar("V")


def remembered(known: dict[K, V], key: K, work: Callable[[], V], keep: int) -> V:
    """`work()`'s answer for `key`, worked out once while `known` holds it: at most `keep`
    answers, the oldest let go first (a memory cleared when full had every answer to work
    out again at once, each time a busy server's reads passed its size)."""
    answer = known.get(key)
    if answer is None:
        answer = work()
        if len(known) >= keep:
            del known[next(iter(known))]
        known[key] = answer
    return answer


# What each corrector reads in a text (`names_read`), shared by every redactor that uses it:
# after a secret changes, every viewer's redactor is new but the corrector is the same, and
# correcting the hundreds of lines a hot context reads again would take most of a FAST call's
# time (issue 17). Each answer is a tuple of strings, which the cyclic collector stops
# tracking after its first pass (a set it would walk at every full pass, through thousands
# of entries: pauses of a whole server that grew with its memory).
_READ: WeakKeyDictionary[PhoneticCorrector, dict[str, tuple[str | None, ...]]] = WeakKeyDictionary()
_DIGESTS: WeakKeyDictionary[PhoneticCorrector, bytes] = WeakKeyDictionary()


def names_read(corrector: PhoneticCorrector, text: str) -> tuple[str | None, ...]:
    """The entities whose names `corrector` reads in `text`, each once: corrects into it as
    written, or as it reads once look-alike letters are Latin ones (a Cyrillic "a" in
    "Sault")."""
    known = _READ.get(corrector)
    if known is None:
        known = _READ[corrector] = {}

    def read() -> tuple[str | None, ...]:
        folded = fold(text)
        parent = corrects_like(corrector, text)
        if parent is not None and (folded == text or corrects_like(corrector, folded) is parent):
            before = _READ.get(parent, {}).get(text)
            if before is not None:
                return before
        found = dict.fromkeys(c.entity_id for c in corrector.correct(text).corrections)
        if folded != text:
            found.update(dict.fromkeys(c.entity_id for c in corrector.correct(folded).corrections))
        return tuple(found)

    return remembered(known, text, read, keep=READ_TEXTS)


def spoken(speaker_name: str, text: str) -> str:
    """A line as redaction reads it: its speaker's name, then what was said."""
    return f"{speaker_name}: {text}"


def has_read(corrector: PhoneticCorrector, text: str) -> bool:
    """Whether this process knows what `corrector` reads in `text` without working it out."""
    return text in _READ.get(corrector, {})


def learn(corrector: PhoneticCorrector, text: str, entity_ids: Iterable[str | None]) -> None:
    """Teach the process what `corrector` reads in `text`, as kept under its reading."""
    known = _READ.get(corrector)
    if known is None:
        known = _READ[corrector] = {}
    remembered(known, text, lambda: tuple(entity_ids), keep=READ_TEXTS)


def unread(corrector: PhoneticCorrector, texts: Iterable[str]) -> dict[bytes, str]:
    """The texts this process has not read with `corrector`, by their readings."""
    known = _READ.get(corrector, {})
    digest = names_digest(corrector)
    return {reading_of(digest, text): text for text in texts if text and text not in known}


def reading_of(names: bytes, text: str) -> bytes:
    """The key of what is read in `text` under `names` (a `names_digest`)."""
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES, key=names
    ).digest()


def names_digest(corrector: PhoneticCorrector) -> bytes:
    """A digest of everything that decides what `corrector` reads in a text: its names (as
    given, in the order ties are ranked), its settings, and the code and data that read."""
    digest = _DIGESTS.get(corrector)
    if digest is None:
        hashed = hashlib.blake2b(_code_digest(), digest_size=DIGEST_BYTES)
        index = corrector.index
        hashed.update(corrector.settings.model_dump_json().encode())
        hashed.update(f"{index.max_code_edits}|{index.forms}".encode())
        for prepared in index.names:
            if prepared.full is None:  # a name as given; its shorter forms follow from it
                name = prepared.name
                hashed.update(f"\x1e{name.text}\x1f{name.entity_id}\x1f{name.person}".encode())
        digest = _DIGESTS[corrector] = hashed.digest()
    return digest


_CODE_DIGEST: list[bytes] = []


def _code_digest() -> bytes:
    """The code and data that read names, once per process."""
    if not _CODE_DIGEST:
        hashed = hashlib.blake2b(digest_size=DIGEST_BYTES)
        sources = sorted(Path(correction_package.__file__).parent.glob("*.py"))
        for source in [*sources, Path(name_spelling.__file__), Path(__file__)]:
            hashed.update(source.name.encode() + b"\x00" + source.read_bytes())
        for library in READING_LIBRARIES:
            hashed.update(f"{library}={metadata.version(library)}".encode())
        hashed.update(f"{sys.version_info[:2]}|{unicodedata.unidata_version}".encode())
        _CODE_DIGEST.append(hashed.digest())
    return _CODE_DIGEST[0]
