from __future__ import annotations

import pytest

from glyphoxa_mcp.domain.tool_names import (
    STRICT_NAME_PATTERN,
    NameStyle,
    ToolName,
    advertised,
    canonical,
)


@pytest.mark.parametrize("tool", list(ToolName))
def test_either_spelling_names_the_same_tool(tool: ToolName) -> None:
    assert canonical(tool.value) is tool
    assert canonical(tool.underscored) is tool


def test_unknown_names_are_not_ours() -> None:
    assert canonical("memory.forget_everything") is None
    assert canonical("memory-search-sessions") is None


def test_underscore_style_satisfies_strict_clients_and_dotted_does_not() -> None:
    underscored = [advertised(t, NameStyle.UNDERSCORE) for t in ToolName]
    assert underscored == [
        "memory_search_sessions",
        "memory_query_entities",
        "memory_get_session_summary",
        "memory_search_facts",
    ]
    assert all(STRICT_NAME_PATTERN.match(name) for name in underscored)
    assert not any(STRICT_NAME_PATTERN.match(advertised(t, NameStyle.DOTTED)) for t in ToolName)
