from __future__ import annotations

import pytest

from glyphoxa_mcp.domain.models import Entity, Visibility
from glyphoxa_mcp.recall.names import NameIndex, NameMatch, compact, match_names, words


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


def _one_by_one(query: str, entities: list[Entity], limit: int) -> list[NameMatch]:
    """The matching rules applied to every spelling in turn, as NameIndex must behave."""
    import jellyfish

    query_words, query_key = words(query), compact(query)
    if not query_key:
        return []
    best: dict[str, NameMatch] = {}
    for entity in entities:
        for text, is_alias in [(entity.name, False), *((a, True) for a in entity.aliases)]:
            key = compact(text)
            if not key:
                continue
            if key == query_key:
                found = ("alias" if is_alias else "exact"), 1.0
            elif len(query_key) >= 3 and (
                f" {query_words} " in f" {words(text)} " or key.startswith(query_key)
            ):
                found = "partial", len(query_key) / len(key)
            elif (score := jellyfish.jaro_winkler_similarity(query_key, key)) >= 0.88:
                found = "fuzzy", score
            else:
                continue
            candidate = NameMatch(entity, text, *found)
            current = best.get(entity.id)
            if current is None or _rank(candidate) < _rank(current):
                best[entity.id] = candidate
    return sorted(best.values(), key=_rank)[:limit]


def _rank(match: NameMatch) -> tuple[int, float, str, str]:
    kinds = {"exact": 0, "alias": 1, "partial": 2, "fuzzy": 3}
    return (kinds[match.kind], -match.score, match.entity.name, match.entity.id)


@pytest.mark.slow
def test_the_index_matches_like_comparing_every_spelling_in_turn() -> None:
    import random

    rng = random.Random(11)
    syllables = ["gar", "ric", "al", "bran", "dor", "the ", "vel", "on", "'", "-", " ", "é", "ar"]

    def name() -> str:
        return "".join(rng.choice(syllables) for _ in range(rng.randint(1, 5))).strip() or "x"

    entities = [
        entity(f"e{i}", name(), *(name() for _ in range(rng.randint(0, 2)))) for i in range(250)
    ]
    entities += [entity("dup-1", "Garric", "Al"), entity("dup-2", "Garric", "al")]
    index = NameIndex(entities)
    queries = [name() for _ in range(200)] + [e.name for e in entities[:50]] + ["", "the", "al"]
    for query in queries:
        expected = _one_by_one(query, entities, 500)
        for limit in (1, 10, 500):
            assert index.match(query, limit) == expected[:limit], query
    odd = [e for e in entities if int(e.id.removeprefix("e").removeprefix("dup-")) % 2]
    for query in queries[:100]:
        accepted = index.match(query, 50, accept=lambda e: e in odd)
        assert accepted == _one_by_one(query, odd, 50)
