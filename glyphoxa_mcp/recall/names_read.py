"""What name correction reads in a text: the entities whose names it finds spelled right in it
or would put back into it, as it is written and as it reads in Latin letters (`names_read`).
Redaction withholds a text that reads a name hidden from its viewer (redaction.py). (pure)

Working that out takes 0.3-1.3 ms a text, and a server read by many NPCs meets hundreds of
texts a second that it has not read since it started (a fifth of its processor under load).
So what was read is kept in the database too (storage/names_read_cache.py, sql/039), under a
digest (`reading_of`) of
- the corrector's names and settings, and the code and data that read them (`names_digest`,
  `CODE_DIGEST`): another name or setting, other sources of correction or folding, or
  another version of a library they read with gives every text another key, so nothing
  read under them is used;
- the text itself.
So there is nothing to invalidate: a row is found only by a reader that would work out the
same. A view asks for the readings of the texts it is about to check that this process has
neither read nor asked for (`unread`), teaches the process what the database keeps
(`learn`), and keeps what it had to work out itself (views/names_ahead.py); rows of names a
campaign no longer has are dropped when a session ends (pipeline/finish.py).
"""

from __future__ import annotations

import hashlib
import json
import sys
import unicodedata
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import TypeVar
from weakref import WeakKeyDictionary

import glyphoxa_mcp.correction as correction_package
from glyphoxa_mcp.correction.known_names import corrects_like, names_of
from glyphoxa_mcp.correction.name_index import KnownName, prepared_names
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector, PhoneticSettings
from glyphoxa_mcp.domain.models import Entity
from glyphoxa_mcp.recall import name_spelling
from glyphoxa_mcp.recall.name_spelling import fold

# Texts a corrector has read, shared by every viewer: enough for every fact and the recent
# lines of a large campaign (20,000 facts at reference scale; at 16,384 under 64 clients,
# three texts in five were read again). An answer is a tuple of ids, most empty: about 20 MB
# when full.
READ_TEXTS = 65_536
# The libraries whose data or code decide what is read: the word frequencies, the sound
# codes, the string distances and the arrays they are kept in, the look-alike letters and
# the Unicode tables that fold them.
READING_LIBRARIES = ("pyspellchecker", "jellyfish", "rapidfuzz", "numpy", "confusables", "regex")
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
# The texts each corrector's readings were looked up for in the database (`looked_up`).
_ASKED: WeakKeyDictionary[PhoneticCorrector, dict[str, bool]] = WeakKeyDictionary()


def names_read(corrector: PhoneticCorrector, text: str) -> tuple[str | None, ...]:
    """The entities whose names `corrector` reads in `text`, each once: finds spelled right
    in it (a person's given name or surname alone among them) or corrects into it, as
    written or as it reads once look-alike letters are Latin ones (a Cyrillic "a" in
    "Sault")."""
    known = _per_corrector(_READ, corrector)

    def read() -> tuple[str | None, ...]:
        folded = fold(text)
        parent = corrects_like(corrector, text)
        if parent is not None and (folded == text or corrects_like(corrector, folded) is parent):
            before = _READ.get(parent, {}).get(text)
            if before is not None:
                return before
        found: dict[str | None, None] = {}
        for written in dict.fromkeys((text, folded)):
            corrected = corrector.correct(written)
            found.update(dict.fromkeys(corrected.spelled_ids))
            found.update(dict.fromkeys(c.entity_id for c in corrected.corrections))
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
    remembered(_per_corrector(_READ, corrector), text, lambda: tuple(entity_ids), keep=READ_TEXTS)


def unread(corrector: PhoneticCorrector, texts: Iterable[str]) -> dict[bytes, str]:
    """The texts this process has not read with `corrector`, by their readings."""
    known = _READ.get(corrector, {})
    digest = names_digest(corrector)
    return {reading_of(digest, text): text for text in texts if text and text not in known}


def not_asked(corrector: PhoneticCorrector, texts: dict[bytes, str]) -> dict[bytes, str]:
    """Of `texts` (by reading), those not looked up in the database already (`looked_up`): a
    text is looked up once per process, whatever the check then finds (one withheld before
    correction runs would otherwise be asked for at every call)."""
    asked = _ASKED.get(corrector, {})
    return {reading: text for reading, text in texts.items() if text not in asked}


def looked_up(corrector: PhoneticCorrector, texts: Iterable[str]) -> None:
    """The texts have been looked up in the database under `corrector`'s names."""
    asked = _per_corrector(_ASKED, corrector)
    for text in texts:
        remembered(asked, text, lambda: True, keep=READ_TEXTS)


def _per_corrector(
    table: WeakKeyDictionary[PhoneticCorrector, dict[str, V]], corrector: PhoneticCorrector
) -> dict[str, V]:
    """The corrector's own entries of a per-corrector table, made on first use."""
    entries = table.get(corrector)
    if entries is None:
        entries = table[corrector] = {}
    return entries


def reading_of(names: bytes, text: str) -> bytes:
    """The key of what is read in `text` under `names` (a names digest)."""
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES, key=names
    ).digest()


def names_digest(corrector: PhoneticCorrector) -> bytes:
    """A digest of everything that decides what `corrector` reads in a text: its names as
    given, its settings, and the code and data that read (`CODE_DIGEST`)."""
    digest = _DIGESTS.get(corrector)
    if digest is None:
        index = corrector.index
        digest = _DIGESTS[corrector] = names_digest_of(
            index.given_names(), corrector.settings, index.max_code_edits, index.forms
        )
    return digest


def campaign_names_digest(entities: Iterable[Entity], settings: PhoneticSettings) -> bytes:
    """The digest of the corrector a campaign's readers use for these entities (every one's
    names and aliases) with these settings, without preparing one."""
    # As an index keeps them: trimmed, each once, descriptions ("the innkeeper") left out.
    given = [prepared.name for prepared in prepared_names(names_of(entities))]
    return names_digest_of(given, settings, settings.max_code_edits, settings.short_forms)


def names_digest_of(
    names: Iterable[KnownName], settings: PhoneticSettings, max_code_edits: int, forms: bool
) -> bytes:
    """The digest of a corrector of `names`. Names tied in every other way are ranked by
    entity, then as given (correction/name_index.py), so the entities' order is left out and
    each entity's own kept: a patched index and one built anew over the same names give one
    digest. Each name is JSON, so no name can pass for two."""
    by_entity = sorted(names, key=lambda name: name.entity_id or "")  # stable
    hashed = hashlib.blake2b(CODE_DIGEST, digest_size=DIGEST_BYTES)
    hashed.update(settings.model_dump_json().encode())
    hashed.update(json.dumps([max_code_edits, forms]).encode())
    for name in by_entity:
        hashed.update(json.dumps([name.text, name.entity_id, name.person]).encode() + b"\n")
    return hashed.digest()


def _code_digest() -> bytes:
    """The code and data that read names, as this process imported them: the sources of name
    correction and of name folding (their word lists, sound codes and look-alike tables come
    from `READING_LIBRARIES`), the versions of those libraries, and Python's Unicode."""
    hashed = hashlib.blake2b(digest_size=DIGEST_BYTES)
    sources = sorted(Path(correction_package.__file__).parent.glob("*.py"))
    if not sources:
        raise RuntimeError(
            "The sources of glyphoxa_mcp.correction are not installed: names read in texts "
            "could not be told from those read by other code."
        )
    for source in [*sources, Path(name_spelling.__file__), Path(__file__)]:
        hashed.update(source.name.encode() + b"\x00" + source.read_bytes())
    for library in READING_LIBRARIES:
        hashed.update(f"{library}={metadata.version(library)}".encode())
    hashed.update(f"{sys.version_info[:2]}|{unicodedata.unidata_version}".encode())
    return hashed.digest()


# Worked out as the code is imported: a process whose files are replaced while it runs still
# keeps what its own code read under its own digest.
CODE_DIGEST = _code_digest()
