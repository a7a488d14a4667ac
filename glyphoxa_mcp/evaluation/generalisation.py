"""Whether a retrieval setting generalises: recall per conversation, its spread, and
leave-one-conversation-out choices of the tuned numbers. (pure)

A setting chosen on the conversations it is then scored on measures fit, not what a user
with other conversations gets. Each fold holds one conversation out, picks the setting that
does best on the others, and scores that pick on the held-out one; the shipped setting is
scored on the same conversation beside it, so a fold shows whether tuning would gain where
it was not tuned.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from glyphoxa_mcp.evaluation.locomo import CATEGORIES
from glyphoxa_mcp.evaluation.recall import KS, OVERALL_CATEGORIES, ScoredQuestion

# The figure a setting is chosen by and folds are compared on: recall at ten turns,
# categories 1-4.
CHOSEN_BY_K = 10


class ScoredOutcome(BaseModel):
    conversation: str
    category: int
    ranks: list[int | None]

    def recall(self, k: int) -> float:
        return ScoredQuestion(self.category, tuple(self.ranks)).recall(k)


class ConversationRow(BaseModel):
    conversation: str
    questions: int
    recall: dict[int, float]
    by_category: dict[str, float]


class Spread(BaseModel):
    k: int
    mean: float
    lowest: float
    highest: float
    stdev: float


class Fold(BaseModel):
    held_out: str
    chosen: str
    chosen_on_others: float
    held_out_chosen: float
    held_out_shipped: float

    @property
    def gain(self) -> float:
        return round(self.held_out_chosen - self.held_out_shipped, 1)


def _mean_recall(outcomes: Sequence[ScoredOutcome], k: int) -> float:
    counted = [o for o in outcomes if o.category in OVERALL_CATEGORIES]
    if not counted:
        return 0.0
    return round(100 * sum(o.recall(k) for o in counted) / len(counted), 1)


def conversations_of(outcomes: Sequence[ScoredOutcome]) -> list[str]:
    return list(dict.fromkeys(o.conversation for o in outcomes))


def per_conversation(outcomes: Sequence[ScoredOutcome]) -> list[ConversationRow]:
    rows = []
    for conversation in conversations_of(outcomes):
        mine = [o for o in outcomes if o.conversation == conversation]
        by_category = {}
        for category, name in CATEGORIES.items():
            members = [o for o in mine if o.category == category]
            if members and category in OVERALL_CATEGORIES:
                by_category[name] = _mean_recall(members, CHOSEN_BY_K)
        rows.append(
            ConversationRow(
                conversation=conversation,
                questions=sum(o.category in OVERALL_CATEGORIES for o in mine),
                recall={k: _mean_recall(mine, k) for k in KS},
                by_category=by_category,
            )
        )
    return rows


def spread(rows: Sequence[ConversationRow], k: int = CHOSEN_BY_K) -> Spread:
    figures = [row.recall[k] for row in rows]
    return Spread(
        k=k,
        mean=round(statistics.fmean(figures), 1),
        lowest=min(figures),
        highest=max(figures),
        stdev=round(statistics.pstdev(figures), 1),
    )


def leave_one_out(
    outcomes_by_setting: Mapping[str, Sequence[ScoredOutcome]], shipped: str
) -> list[Fold]:
    """One fold per conversation: the setting best on the others (ties go to the shipped
    one, then to the first named), scored on the held-out conversation."""
    names = sorted(outcomes_by_setting, key=lambda name: name != shipped)
    folds = []
    for held_out in conversations_of(outcomes_by_setting[shipped]):

        def on(name: str, inside: bool, held_out: str = held_out) -> float:
            return _mean_recall(
                [o for o in outcomes_by_setting[name] if (o.conversation == held_out) == inside],
                CHOSEN_BY_K,
            )

        chosen = max(names, key=lambda name: on(name, inside=False))
        folds.append(
            Fold(
                held_out=held_out,
                chosen=chosen,
                chosen_on_others=on(chosen, inside=False),
                held_out_chosen=on(chosen, inside=True),
                held_out_shipped=on(shipped, inside=True),
            )
        )
    return folds
