from __future__ import annotations

import json
from urllib.parse import parse_qsl

from glyphoxa_mcp.domain.models import Entity, Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.recall.speech_terms import formatted, speech_terms


def entity(name: str, *aliases: str) -> Entity:
    return Entity(
        id=name.lower().replace(" ", "-").replace("'", ""),
        type=EntityType.NPC,
        name=name,
        aliases=aliases,
        attributes={},
        visibility=Visibility(),
    )


def test_names_and_aliases_come_once_in_order() -> None:
    terms = speech_terms([entity("Ysolde", "Captain Ysolde"), entity("ysolde"), entity("Kael")])
    assert terms == ["Ysolde", "Captain Ysolde", "Kael"]


def test_each_service_gets_its_own_shape() -> None:
    terms = ["Ysolde", "Salt-Knives", "Brannoch's Rest"]
    assert formatted(terms, "plain", "demo") == "Ysolde\nSalt-Knives\nBrannoch's Rest"
    assert json.loads(formatted(terms, "json", "demo")) == {"campaign": "demo", "terms": terms}
    assert parse_qsl(formatted(terms, "deepgram", "demo")) == [("keyterm", t) for t in terms]
    boost = json.loads(formatted(terms, "assemblyai", "demo"))
    assert boost == {
        "word_boost": ["Ysolde", "Salt Knives", "Brannoch's Rest"],
        "boost_param": "high",
    }


def test_deepgram_gets_at_most_its_limit() -> None:
    terms = [f"Name{n}" for n in range(150)]
    assert len(parse_qsl(formatted(terms, "deepgram", "demo"))) == 100
