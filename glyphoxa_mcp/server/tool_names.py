"""Tool names: dotted canonical names, and the underscore spelling strict clients require.

Claude Desktop, the OpenAI API and the Anthropic API accept only ^[a-zA-Z0-9_-]{1,64}$, so a
server can advertise `memory_search_sessions` instead; calls under either spelling work in
both modes. (pure)
"""

from __future__ import annotations

import re
from enum import StrEnum

STRICT_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class ToolName(StrEnum):
    SEARCH_SESSIONS = "memory.search_sessions"
    QUERY_ENTITIES = "memory.query_entities"
    GET_SESSION_SUMMARY = "memory.get_session_summary"
    SEARCH_FACTS = "memory.search_facts"

    @property
    def underscored(self) -> str:
        return self.value.replace(".", "_")


class NameStyle(StrEnum):
    DOTTED = "dotted"
    UNDERSCORE = "underscore"


_BY_SPELLING = {spelling: tool for tool in ToolName for spelling in (tool.value, tool.underscored)}


def canonical(name: str) -> ToolName | None:
    """The tool a name refers to under either spelling; None for a name that is not ours."""
    return _BY_SPELLING.get(name)


def advertised(tool: ToolName, style: NameStyle) -> str:
    return tool.underscored if style is NameStyle.UNDERSCORE else tool.value
