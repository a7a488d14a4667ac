"""Evidence recall within the first k transcript turns a search returns. (pure)

A search returns passages of several turns. A reader meets their turns in order, so each
passage is expanded into its turns, turns seen before are skipped, and recall@k is the share
of a question's evidence turns among the first k distinct turns.

Which questions count: LoCoMo's categories 1-4 make the overall figure, as in the benchmark's
QA scoring and the work that reports on it; category 5 (adversarial: the question pins one
speaker's fact on the other, and it has no answer) is shown on its own row. Questions without
evidence turns (a few in category 3) cannot be scored and are left out and counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from glyphoxa_mcp.evaluation.locomo import CATEGORIES

KS = (5, 10, 20)
OVERALL_CATEGORIES = (1, 2, 3, 4)


def turns_in_order(passages: Iterable[Sequence[str]]) -> list[str]:
    """The distinct turns of the returned passages, in the order a reader meets them."""
    seen: dict[str, None] = {}
    for passage in passages:
        for turn in passage:
            seen.setdefault(turn, None)
    return list(seen)


@dataclass(frozen=True)
class ScoredQuestion:
    category: int
    # Where each evidence turn was found among the returned turns (1 is first); None: not found.
    ranks: tuple[int | None, ...]

    def recall(self, k: int) -> float:
        return sum(rank is not None and rank <= k for rank in self.ranks) / len(self.ranks)


def score_question(
    category: int, evidence: Sequence[str], returned_turns: Sequence[str]
) -> ScoredQuestion:
    """`evidence` must hold at least one turn."""
    if not evidence:
        raise ValueError("a question without evidence cannot be scored")
    position = {turn: rank for rank, turn in enumerate(returned_turns, 1)}
    return ScoredQuestion(category, tuple(position.get(turn) for turn in dict.fromkeys(evidence)))


class RecallRow(BaseModel):
    label: str
    categories: list[int]
    questions: int
    recall: dict[int, float] = Field(description="Mean recall at k turns, in percent.")


def summarise(scored: Sequence[ScoredQuestion], ks: Sequence[int] = KS) -> list[RecallRow]:
    """One row per category present, then the overall row (categories 1-4) and all of them."""
    groups: list[tuple[str, tuple[int, ...]]] = [
        (f"{c} {name}", (c,)) for c, name in CATEGORIES.items()
    ]
    groups.append(("overall (1-4)", OVERALL_CATEGORIES))
    groups.append(("all (1-5)", tuple(CATEGORIES)))
    rows = []
    for label, categories in groups:
        members = [s for s in scored if s.category in categories]
        if not members:
            continue
        rows.append(
            RecallRow(
                label=label,
                categories=list(categories),
                questions=len(members),
                recall={
                    k: round(100 * sum(s.recall(k) for s in members) / len(members), 1) for k in ks
                },
            )
        )
    return rows
