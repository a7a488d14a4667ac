from __future__ import annotations

import pytest
from pydantic import ValidationError

from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.tool_names import ToolName
from glyphoxa_mcp.views.limits import clamp


def test_fast_lists_only_query_entities() -> None:
    fast = tier_policy(Tier.FAST)
    assert fast.tools == (ToolName.QUERY_ENTITIES,)
    assert not fast.allows(ToolName.SEARCH_SESSIONS)
    refusal = fast.refusal(ToolName.SEARCH_SESSIONS)
    assert "memory.search_sessions" in refusal and "FAST" in refusal
    assert "memory.query_entities" in refusal


@pytest.mark.parametrize("tier", [Tier.STANDARD, Tier.DEEP])
def test_standard_and_deep_list_all_four(tier: Tier) -> None:
    assert set(tier_policy(tier).tools) == set(ToolName)


def test_deeper_tiers_allow_more() -> None:
    fast, standard, deep = (tier_policy(t) for t in Tier)
    assert fast.max_depth < standard.max_depth < deep.max_depth == 3
    assert fast.max_results <= standard.max_results <= deep.max_results == 50
    assert (fast.deadline_ms, standard.deadline_ms, deep.deadline_ms) == (150, 1000, 4000)
    assert deep.graph_expansion and not standard.graph_expansion


def test_deadlines_are_configurable_but_positive() -> None:
    assert tier_policy(Tier.FAST, deadline_ms=40).deadline_ms == 40
    with pytest.raises(ValidationError):
        tier_policy(Tier.FAST, deadline_ms=0)


@pytest.mark.parametrize(
    ("requested", "used", "clamped"), [(0, 1, True), (-3, 1, True), (7, 7, False), (99, 50, True)]
)
def test_counts_are_clamped_into_range_and_say_so(requested: int, used: int, clamped: bool) -> None:
    result = clamp(requested, 50)
    assert result.used == used and result.was_clamped is clamped
