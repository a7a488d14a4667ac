from __future__ import annotations

from glyphoxa_mcp.evaluation.generalisation import (
    ScoredOutcome,
    leave_one_out,
    per_conversation,
    spread,
)


def outcome(conversation: str, category: int, *ranks: int | None) -> ScoredOutcome:
    return ScoredOutcome(conversation=conversation, category=category, ranks=list(ranks))


def test_each_conversation_gets_its_own_row_and_category_figures() -> None:
    outcomes = [
        outcome("a", 4, 1),
        outcome("a", 1, 3, None),
        outcome("a", 5, 1),  # adversarial: shown nowhere in the 1-4 figures
        outcome("b", 2, 12),
    ]
    rows = {row.conversation: row for row in per_conversation(outcomes)}
    assert rows["a"].questions == 2
    assert rows["a"].recall == {5: 75.0, 10: 75.0, 20: 75.0}
    assert rows["a"].by_category == {"multi-hop": 50.0, "single-hop": 100.0}
    assert rows["b"].recall == {5: 0.0, 10: 0.0, 20: 100.0}
    figures = spread(list(rows.values()))
    assert (figures.mean, figures.lowest, figures.highest, figures.stdev) == (
        37.5,
        0.0,
        75.0,
        37.5,
    )


def test_a_fold_picks_on_the_other_conversations_and_scores_the_held_out_one() -> None:
    # "wide" is better on a and b but worse on c, where it would be picked from a and b.
    shipped = [outcome("a", 4, 11), outcome("b", 4, 11), outcome("c", 4, 1)]
    wide = [outcome("a", 4, 1), outcome("b", 4, 1), outcome("c", 4, 11)]
    folds = {f.held_out: f for f in leave_one_out({"shipped": shipped, "wide": wide}, "shipped")}
    assert folds["c"].chosen == "wide"
    assert (folds["c"].chosen_on_others, folds["c"].held_out_chosen) == (100.0, 0.0)
    assert folds["c"].held_out_shipped == 100.0 and folds["c"].gain == -100.0
    # Held out a: on b and c the two tie, and a tie keeps the shipped setting.
    assert folds["a"].chosen == "shipped" and folds["a"].gain == 0.0
