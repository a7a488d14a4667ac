from __future__ import annotations

import pytest

from glyphoxa_mcp.evaluation.recall import (
    ScoredQuestion,
    score_question,
    summarise,
    turns_in_order,
)


def test_passages_expand_into_distinct_turns_in_reading_order() -> None:
    passages = [["D1:1", "D1:2", "D1:3"], ["D1:3", "D1:4"], ["D2:7"], ["D1:1"]]
    assert turns_in_order(passages) == ["D1:1", "D1:2", "D1:3", "D1:4", "D2:7"]


def test_recall_counts_evidence_turns_within_the_first_k() -> None:
    returned = ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6"]
    scored = score_question(1, ["D1:2", "D1:6", "D9:9"], returned)
    assert scored.ranks == (2, 6, None)
    assert [scored.recall(k) for k in (1, 2, 5, 6)] == [0, 1 / 3, 1 / 3, 2 / 3]


def test_repeated_evidence_counts_once() -> None:
    assert score_question(4, ["D1:2", "D1:2"], ["D1:2"]).ranks == (1,)


def test_a_question_without_evidence_cannot_be_scored() -> None:
    with pytest.raises(ValueError, match="without evidence"):
        score_question(3, [], ["D1:1"])


def test_overall_is_categories_one_to_four_and_adversarial_stands_apart() -> None:
    scored = [
        ScoredQuestion(1, (1, None)),  # 50% at every k
        ScoredQuestion(4, (7,)),  # found at 7: 0% at 5, 100% at 10
        ScoredQuestion(4, (1,)),
        ScoredQuestion(5, (None,)),
    ]
    rows = {row.label: row for row in summarise(scored, ks=(5, 10))}
    assert list(rows) == [
        "1 multi-hop",
        "4 single-hop",
        "5 adversarial",
        "overall (1-4)",
        "all (1-5)",
    ]
    assert rows["4 single-hop"].recall == {5: 50.0, 10: 100.0}
    assert rows["overall (1-4)"].questions == 3
    assert rows["overall (1-4)"].recall == {5: 50.0, 10: 83.3}
    assert rows["all (1-5)"].recall == {5: 37.5, 10: 62.5}
