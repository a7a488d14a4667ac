from glyphoxa_mcp.correction.alignment import (
    adds_a_word,
    rest_heard_beside,
    unheard_edges,
    weakest_word,
)
from glyphoxa_mcp.correction.name_index import KnownName, prepared_names
from glyphoxa_mcp.correction.words import segments


def weakest(heard: str, name: str) -> float:
    (prepared,) = prepared_names([KnownName(name)])
    (run,) = segments(heard)
    return weakest_word(run, prepared)


def test_each_word_of_the_name_is_compared_with_what_was_heard_in_its_place():
    assert weakest("dame irsa callow", "Dame Irsa Collow") > 0.7
    assert weakest("sunk near", "Sunken Gate") < 0.5  # nothing sounds like "Gate"


def test_each_word_heard_is_compared_with_the_part_of_the_name_in_its_place():
    # "Salt" is there and "Law" is in "cellar", but "cellar" is far from "Law".
    assert weakest("salt cellar", "Salt Law") < 0.55


def test_function_words_and_fillers_need_no_counterpart():
    assert weakest("isle varr", "Isle of Varr") == 1.0
    assert weakest("halvard uh penn", "Halvard Penn") == 1.0


def test_a_name_of_one_word_is_not_taken_word_by_word():
    # Speech-to-text splits a name anywhere: "ice keld" is "Is|keld".
    assert weakest("ice keld", "Iskeld") == 1.0


def test_letters_of_a_name_nothing_heard_stands_for_are_counted_at_its_edges():
    (prepared,) = prepared_names([KnownName("Sister Vennacht")])
    assert unheard_edges(prepared, "sisterven") == (0, 5)
    assert unheard_edges(prepared, "sistervenknocked") == (0, 0)
    assert unheard_edges(prepared, "vennacht") == (6, 0)


def test_a_form_with_the_rest_of_its_name_heard_beside_it_is_only_part_of_it():
    forms = {n.name.text: n for n in prepared_names([KnownName("Captain Tobiah Grail")], True)}
    (run,) = segments("captain toby a grell says no")
    assert rest_heard_beside(forms["Captain Tobiah"], run[:0], run[2:], 0.55)
    (run,) = segments("captain toby says no")
    assert not rest_heard_beside(forms["Captain Tobiah"], run[:0], run[2:], 0.55)
    (run,) = segments("captain toby grale")
    assert rest_heard_beside(forms["Grail"], run[:2], run[3:], 0.55)


def test_one_word_of_a_name_heard_as_two_is_compared_whole():
    # "eye" alone is far from "I", but "eye drun" is "Idrun".
    assert weakest("mirror of eye drun", "Mirror of Idrun") > 0.55
    # Two words each with a counterpart of its own are still compared one by one.
    assert weakest("salt cellar", "Salt Law") < 0.55


def adds(heard: str, name: str) -> bool:
    (prepared,) = prepared_names([KnownName(name)])
    (run,) = segments(heard)
    return adds_a_word(run, prepared)


def test_a_function_word_that_stands_for_none_of_the_name_is_no_part_of_it():
    assert adds("grim and bald", "Grimbald")
    assert not adds("quill and darrow", "Quillon Darrow")  # "and" for the "on"
    assert not adds("grim uh bald", "Grimbald")  # a filler is the speaker's
    assert not adds("oz a bell", "Ozzabel")
