from __future__ import annotations

from glyphoxa_mcp.recall.redaction import SHOW_EVERYTHING, Redactor
from glyphoxa_mcp.recall.sentences import relationship_sentence


def test_built_in_and_custom_relationships_read_as_sentences() -> None:
    assert relationship_sentence("Grimjaw", "MEMBER_OF", "Smiths Guild") == (
        "Grimjaw is a member of Smiths Guild."
    )
    assert (
        relationship_sentence("Mira", "OWES_MONEY_TO", "Grimjaw") == "Mira owes money to Grimjaw."
    )


def test_sentences_naming_hidden_entities_are_dropped() -> None:
    redactor = Redactor.hiding(["Cult of Ash", "the Ashen Ones", "x"])
    text = "We met Grimjaw. The cult of ash meets below! Nobody saw the ashen ones? Then we left."
    assert redactor.redact(text) == ("We met Grimjaw. Then we left.", 2)


def test_names_only_match_as_whole_words() -> None:
    redactor = Redactor.hiding(["Ash"])
    assert redactor.redact("The ashes are cold.") == ("The ashes are cold.", 0)
    assert redactor.mentions_hidden("Ask Ash.")


def test_nothing_hidden_keeps_everything() -> None:
    assert SHOW_EVERYTHING.redact("Anything at all.") == ("Anything at all.", 0)
    assert Redactor.hiding([]).redact("Still here.") == ("Still here.", 0)
