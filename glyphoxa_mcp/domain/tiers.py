"""Budget tiers: which tools a model sees and how much each call may do. (pure)"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.domain.tool_names import ToolName


class Tier(StrEnum):
    FAST = "FAST"
    STANDARD = "STANDARD"
    DEEP = "DEEP"


class TierPolicy(BaseModel):
    """What a tier allows. Results are clamped to [1, max_results]; graph walks to max_depth."""

    model_config = ConfigDict(frozen=True)

    tier: Tier
    tools: tuple[ToolName, ...]
    max_depth: int = Field(ge=1, le=5)
    max_results: int = Field(ge=1, le=50)
    deadline_ms: int = Field(gt=0, description="A call running longer is cancelled.")
    graph_expansion: bool = Field(
        description="Expand search results through the knowledge graph (GraphRAG)."
    )

    def allows(self, tool: ToolName) -> bool:
        return tool in self.tools

    def refusal(self, tool: ToolName) -> str:
        listed = ", ".join(t.value for t in self.tools)
        return (
            f"{tool.value} is not available in the {self.tier.value} tier, which offers only "
            f"{listed}. Use a STANDARD or DEEP endpoint for it."
        )


ALL_TOOLS = tuple(ToolName)
DEFAULT_DEADLINES_MS = {Tier.FAST: 150, Tier.STANDARD: 1_000, Tier.DEEP: 4_000}
# tools, max_depth, max_results, graph_expansion
_LIMITS = {
    Tier.FAST: ((ToolName.QUERY_ENTITIES,), 1, 10, False),
    Tier.STANDARD: (ALL_TOOLS, 2, 20, False),
    Tier.DEEP: (ALL_TOOLS, 3, 50, True),
}


def tier_policy(tier: Tier, deadline_ms: int | None = None) -> TierPolicy:
    """The policy of `tier`, with its default deadline unless one is given."""
    tools, max_depth, max_results, graph_expansion = _LIMITS[tier]
    return TierPolicy(
        tier=tier,
        tools=tools,
        max_depth=max_depth,
        max_results=max_results,
        deadline_ms=deadline_ms if deadline_ms is not None else DEFAULT_DEADLINES_MS[tier],
        graph_expansion=graph_expansion,
    )
