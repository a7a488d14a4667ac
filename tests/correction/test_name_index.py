import gc

from glyphoxa_mcp.correction import name_index
from glyphoxa_mcp.correction.name_index import KnownName, NameIndex, phonetic_codes


def test_a_split_mishearing_is_found_by_the_code_of_the_whole_window():
    index = NameIndex([KnownName("Dovrek", "dovrek"), KnownName("Saltmere", "saltmere")])
    found = index.similar("dovewreck")
    assert found[0][0].name == KnownName("Dovrek", "dovrek")
    assert found[0][1] > 0.8


def test_names_far_in_sound_are_not_candidates():
    index = NameIndex([KnownName("Dovrek")])
    assert index.similar("lanternofosk") == ()


def test_a_floor_drops_weak_candidates():
    index = NameIndex([KnownName("Brannoch"), KnownName("Brackenford")])
    assert [n.name.text for n, _ in index.similar("brannock", floor=0.8)] == ["Brannoch"]


def test_ch_is_also_read_as_in_loch():
    assert phonetic_codes("brannoch") == ("BRNX", "BRNK")


def test_exact_letters_and_counts_of_words_and_parts():
    index = NameIndex([KnownName("Oru-Tambe"), KnownName("Captain Oriel Vask")])
    (oru,) = index.exact("orutambe")
    assert (oru.word_count, oru.parts) == (1, 2)
    (vask,) = index.exact("captainorielvask")
    assert (vask.word_count, vask.parts) == (3, 3)
    assert index.max_parts == 3
    assert len(index) == 2


def test_blank_and_repeated_names_are_skipped():
    index = NameIndex([KnownName(" "), KnownName("Vask", "a"), KnownName("Vask", "a")])
    assert len(index) == 1


def test_a_name_may_be_heard_without_its_of_but_not_without_a_word_that_carries_it():
    index = NameIndex([KnownName("Isle of Varr"), KnownName("Captain Oriel Vask")])
    (isle,) = index.exact("isleofvarr")
    assert (isle.word_spans, isle.least_words) == (((0, 4), (6, 10)), 2)
    (vask,) = index.exact("captainorielvask")
    assert vask.least_words == 3


def test_the_function_words_names_have_are_known_and_patches_keep_them_exact():
    index = NameIndex([KnownName("Isle of Varr", "isle"), KnownName("Kael", "kael")])
    assert (index.function_words, index.has_article) == (frozenset({"of"}), False)
    patched = index.with_changes(["isle"], [KnownName("Temple of the Tide", "isle")])
    assert patched.function_words == frozenset({"of", "the"}) and patched.has_article
    assert index.with_changes(["isle"], []).function_words == frozenset()


def test_a_patch_on_a_rebuilt_index_keeps_a_persons_shorter_forms_as_forms(monkeypatch):
    monkeypatch.setattr(name_index, "REBUILD_AT", 0)
    kael = KnownName("Kael", "kael")
    grell = KnownName("Captain Tobiah Grell", "grell", True)
    index = NameIndex([kael], forms=True).with_changes(["grell"], [grell])
    assert index._rebuild is not None
    index._rebuild.wait()
    # Renamed while the rebuilt index waits: the patch goes on top of the rebuilt one.
    grail = KnownName("Captain Tobiah Grail", "grell", True)
    index = index.with_changes(["grell"], [grail])
    fresh = NameIndex([grail, kael], forms=True)  # ordered by entity id, as campaigns are
    assert [(n.name.text, n.full) for n in index.names] == [
        (n.name.text, n.full) for n in fresh.names
    ]
    assert ("Grail", "Captain Tobiah Grail") in [(n.name.text, n.full) for n in index.names]


def test_what_lookups_leave_in_the_caches_drops_out_of_the_cyclic_collectors_sight():
    """A server keeps tens of thousands of these: held in sets, every full collection walked
    them all (pauses of a third of a second under load); tuples of strings it stops tracking."""
    index = NameIndex([KnownName("Brannoch", "brannoch"), KnownName("Velloway", "velloway")])
    # One word heard: codes one letter apart, as `_deletions(code, 1)` below.
    assert index.similar("branok", words=1) and index.may_name("velowey", words=1)
    gc.collect()
    gc.collect()  # a tuple is let go once what it holds is
    for key in ("branok", "velowey"):
        for code in phonetic_codes(key):
            kept = name_index._deletions(code, 1)
            assert kept[0] and not any(map(gc.is_tracked, (kept, *kept)))
    # What `similar` remembers names its names by number, and still answers with the names.
    remembered = index._similar("branok", 0.0, False)
    assert remembered and not any(map(gc.is_tracked, (remembered, *remembered)))
    assert [n.name.text for n, _ in index.similar("branok", words=1)] == ["Brannoch"]
