from __future__ import annotations

from glyphoxa_mcp.recall.names import compact, match_names, words
from glyphoxa_mcp.storage.models import Entity, Visibility


def entity(entity_id: str, name: str, *aliases: str) -> Entity:
    return Entity(
        id=entity_id, type="npc", name=name, aliases=aliases, attributes={}, visibility=Visibility()
    )


CAST = [
    entity("grimjaw", "Grimjaw", "the blacksmith"),
    entity("vask", "Captain Oriel Vask", "the captain"),
    entity("kavesh", "Ka'vesh"),
    entity("vhal-dorun", "Vhal-Dorun"),
    entity("red-kettle", "Red Kettle"),
    entity("kestrin", "Kestrin"),
]


def ids(query: str) -> list[str]:
    return [m.entity.id for m in match_names(query, CAST)]


def test_normalising_ignores_case_articles_and_punctuation() -> None:
    assert words("The Red-Kettle!") == "red kettle"
    assert compact("Ka'vesh") == compact("kavesh") == "kavesh"


def test_exact_names_and_aliases_come_first() -> None:
    [match] = match_names("GRIMJAW", CAST)
    assert match.kind == "exact" and match.score == 1.0
    [alias] = match_names("blacksmith", CAST)
    assert alias.entity.id == "grimjaw" and alias.kind == "alias"


def test_spacing_hyphens_and_apostrophes_do_not_matter() -> None:
    assert ids("vhal dorun") == ["vhal-dorun"]
    assert ids("kavesh") == ["kavesh"]
    assert ids("the red kettle") == ["red-kettle"]


def test_a_word_of_a_longer_name_is_a_partial_match() -> None:
    [match] = match_names("Oriel", CAST)
    assert match.entity.id == "vask" and match.kind == "partial"


def test_misspellings_are_tolerated() -> None:
    [match] = match_names("Grimjw", CAST)
    assert match.entity.id == "grimjaw" and match.kind == "fuzzy"
    assert ids("Kestrn") == ["kestrin"]


def test_unrelated_words_match_nothing() -> None:
    assert ids("dragon") == []
    assert ids("the") == []
    assert ids("   ") == []
