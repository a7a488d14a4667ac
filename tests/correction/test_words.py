from glyphoxa_mcp.correction.english import frequency
from glyphoxa_mcp.correction.words import ascii_letters, letters, segments


def test_punctuation_ends_a_run_of_words():
    runs = segments("Carol, more chips? Sure.")
    assert [[w.text for w in run] for run in runs] == [["Carol"], ["more", "chips"], ["Sure"]]


def test_a_possessive_stays_outside_the_word():
    (run,) = segments("I grab bran nock's arm")
    nock = run[3]
    assert (nock.text, "I grab bran nock's arm"[nock.start : nock.end]) == ("nock", "nock")


def test_apostrophes_and_hyphens_inside_a_word_keep_it_whole():
    (run,) = segments("Ka'vesh meets Oru-Tambe")
    assert [w.text for w in run] == ["Ka'vesh", "meets", "Oru-Tambe"]
    assert [w.key for w in run] == ["kavesh", "meets", "orutambe"]


def test_letters_ignore_case_spacing_and_punctuation_but_keep_non_ascii():
    assert letters("Tal'Vessin") == letters("tal vessin") == "talvessin"
    assert letters("Zoë Ærwyn") == "zoëærwyn"
    assert ascii_letters("zoëærwyn") == "zoeaerwyn"


def test_a_dropped_g_is_restored_for_telling_english_from_names():
    words = [w for run in segments("Startin' my biz, livin' free, Ilvenna's") for w in run]
    assert [w.standard for w in words] == ["starting", "my", "biz", "living", "free", "ilvenna"]
    assert words[0].text == "Startin"


def test_british_spellings_count_as_the_english_words_they_are():
    assert frequency("harbour") == frequency("harbor") > 0
    assert frequency("Saltmere") == 0
