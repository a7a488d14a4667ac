from glyphoxa_mcp.correction.name_forms import looks_like_a_person, short_forms
from glyphoxa_mcp.correction.name_index import KnownName, NameIndex, prepared_names


def test_a_titled_name_is_said_by_each_name_after_the_title_and_without_it():
    assert set(short_forms("Captain Tobiah Grell")) == {
        "Tobiah",
        "Grell",
        "Captain Tobiah",
        "Captain Grell",
        "Tobiah Grell",
    }
    assert short_forms("Mother Ysmay") == ("Ysmay",)


def test_two_names_english_does_not_know_are_a_persons():
    assert set(short_forms("Quillon Darrow")) == {"Quillon", "Darrow"}


def test_places_items_and_factions_have_no_forms_when_the_type_is_unknown():
    for name in (
        "Port Ledrin",
        "Greywater Crossing",
        "Lantern of Osk",
        "Blackbriar Lute",  # "lute" is a rare word, but English
        "Saltmere Harbour",  # "harbour" is "harbor" spelled the British way
        "Old Salt Caves",  # a title and everyday words
        "Cobalt Hand",
    ):
        assert not looks_like_a_person(name), name
        assert short_forms(name) == (), name


def test_titles_function_words_and_everyday_words_are_never_forms():
    assert short_forms("Maren of the Hill", person=True) == ("Maren",)
    assert short_forms("Sister Kell", person=True) == ("Kell",)
    assert short_forms("Captain Sunday", person=True) == ()


def test_the_caller_knowing_the_type_decides():
    assert short_forms("Hob Tanner") == ()  # "tanner" is English: unknown whether a person
    assert set(short_forms("Hob Tanner", person=True)) == {"Hob", "Tanner"}
    assert short_forms("Quillon Darrow", person=False) == ()


def test_forms_are_indexed_only_when_asked_and_after_the_names_as_given():
    names = [KnownName("Sister Maudra Kell", "kell-npc", True), KnownName("Kell", "kell-town")]
    assert [n.name.text for n in prepared_names(names)] == ["Sister Maudra Kell", "Kell"]
    index = NameIndex(names, forms=True)
    # The town is named "Kell"; the sister's surname is a form, ranked after it.
    assert [(n.name.entity_id, n.full) for n in index.exact("kell")] == [
        ("kell-town", None),
        ("kell-npc", "Sister Maudra Kell"),
    ]


def test_a_form_already_an_alias_is_the_alias():
    names = [KnownName("Old Berrit", "berrit", True), KnownName("Berrit", "berrit", True)]
    prepared = prepared_names(names, forms=True)
    assert [(n.name.text, n.full) for n in prepared] == [("Old Berrit", None), ("Berrit", None)]


def test_a_patched_index_keeps_forms():
    index = NameIndex([KnownName("Brannoch", "b", True)], forms=True)
    patched = index.with_changes(["g"], [KnownName("Captain Tobiah Grell", "g", True)])
    assert "Grell" in [n.text for n in patched.names_of("g")]
    assert patched.compacted().forms


def test_a_title_makes_a_form_of_an_everyday_surname_which_alone_is_none():
    forms = short_forms("Sergeant Horla Brisk", person=True)
    assert {"Horla", "Sergeant Horla", "Sergeant Brisk", "Horla Brisk"} == set(forms)
    assert "Brisk" not in forms


def test_a_persons_title_and_a_name_english_does_not_know_are_a_persons_name():
    # The surname is an everyday word; the title and the given name tell a person.
    assert looks_like_a_person("Sister Ondine Marsh")
    assert set(short_forms("Warden Tibalt Crane")) == {
        "Tibalt",
        "Warden Tibalt",
        "Warden Crane",
        "Tibalt Crane",
    }
    assert not looks_like_a_person("Captain Sunday")  # no word that tells who
    assert not looks_like_a_person("Lady of the Lake")  # a function word: a description


def test_a_title_that_also_leads_places_names_needs_only_names_after_it():
    assert looks_like_a_person("Old Berrit")
    assert not looks_like_a_person("Saint Orrick's Well")
    assert not looks_like_a_person("High Kethrin Tor")
