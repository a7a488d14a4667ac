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
