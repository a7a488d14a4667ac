from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.domain.models import Entity, Visibility
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.fusion import RRF_K, reciprocal_rank_fusion
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.recall.time_bounds import TimeBound, parse_time_bound


def test_items_found_by_both_rankings_rise_to_the_top() -> None:
    fused = reciprocal_rank_fusion({"vector": ["a", "b", "c"], "text": ["c", "d"]})
    assert [key for key, _, _ in fused] == ["c", "a", "b", "d"]
    c = fused[0]
    assert c[1] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert c[2] == ("vector", "text")


def test_weights_tilt_the_fusion() -> None:
    fused = reciprocal_rank_fusion({"vector": ["a"], "text": ["b"]}, {"text": 2.0})
    assert [key for key, _, _ in fused] == ["b", "a"]


def test_a_smaller_k_gives_the_top_ranks_more_say() -> None:
    rankings = {"vector": ["a", "b"], "text": ["c", "d", "e", "f", "g", "b"]}
    assert reciprocal_rank_fusion(rankings)[0][0] == "b"
    sharp = reciprocal_rank_fusion(rankings, k=1)
    assert [key for key, _, _ in sharp][:2] == ["a", "c"]
    assert sharp[0][1] == pytest.approx(1 / 2)


def npc(entity_id: str, name: str, *aliases: str) -> Entity:
    return Entity(
        id=entity_id, type="npc", name=name, aliases=aliases, attributes={}, visibility=Visibility()
    )


def test_mentions_are_whole_words_longest_first_in_order() -> None:
    pattern = NamePattern.of_entities(
        [npc("vask", "Captain Oriel Vask", "Vask"), npc("kettle", "Red Kettle"), npc("red", "Red")]
    )
    text = "Did the red kettle crew meet Vask, or Captain Oriel Vask? Redder wine."
    assert pattern.owners_in(text) == ["kettle", "vask"]
    assert pattern.owners_in("Red sky.") == ["red"]
    assert not NamePattern.of_entities([]).found_in("anything")


def test_mentions_match_where_the_plain_longest_first_alternation_matches() -> None:
    """Looking names up by their words is an optimisation only: same matches, same places."""
    import random
    import re

    rng = random.Random(5)
    pieces = ["al", "bran", "dor", "Dor", "ric", " ", "-", "'s", "é", "the ", "x"]
    terms = {
        "".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))).strip() for _ in range(300)
    }
    terms = {t for t in terms if len(t) >= 2}
    pattern = NamePattern.of_terms((t, t) for t in terms)
    folded = sorted({t.casefold() for t in terms}, key=len, reverse=True)
    flat = re.compile(rf"(?<!\w)(?:{'|'.join(re.escape(t) for t in folded)})(?!\w)", re.IGNORECASE)
    for _ in range(2000):
        text = "".join(rng.choice([*pieces, ", ", ". ", "n"]) for _ in range(rng.randint(1, 12)))
        expected = [(m.start(), m.group(0)) for m in flat.finditer(text)]
        found = [(m.start, text[m.start : m.end]) for m in pattern.mentions(text)]
        assert found == expected, text


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("2026-03-14", TimeBound(real=datetime(2026, 3, 14, tzinfo=UTC))),
        ("2026-03-14T19:30Z", TimeBound(real=datetime(2026, 3, 14, 19, 30, tzinfo=UTC))),
        ("day 12", TimeBound(story_day=12.0)),
        ("Story Day 3.5", TimeBound(story_day=3.5)),
        ("  ", None),
    ],
)
def test_time_bounds_are_real_times_or_story_days(text: str, bound: TimeBound | None) -> None:
    assert parse_time_bound(text, "after") == bound


@pytest.mark.parametrize("text", ["last tuesday", "2026-13-45", "day twelve", "'; DROP"])
def test_malformed_time_bounds_name_the_field(text: str) -> None:
    with pytest.raises(InvalidInputError, match=r"before .* is not an ISO date") as caught:
        parse_time_bound(text, "before")
    assert caught.value.field == "before"
