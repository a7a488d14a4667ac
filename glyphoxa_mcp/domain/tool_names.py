"""Tool names: dotted canonical names, and the underscore spelling strict clients require.

Claude Desktop, the OpenAI API and the Anthropic API accept only ^[a-zA-Z0-9_-]{1,64}$, so a
server can advertise `memory_search_sessions` instead; calls under either spelling work in
both modes. (pure)
"""

from __future__ import annotations

import re
from enum import StrEnum

STRICT_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class DottedName(StrEnum):
    @property
    def underscored(self) -> str:
        return self.value.replace(".", "_")


class ToolName(DottedName):
    """The memory tools, listed on NPC and DM endpoints."""

    SEARCH_SESSIONS = "memory.search_sessions"
    QUERY_ENTITIES = "memory.query_entities"
    GET_SESSION_SUMMARY = "memory.get_session_summary"
    SEARCH_FACTS = "memory.search_facts"


class RecorderToolName(DottedName):
    """The recorder's tools, for bridge programs: listed on the recorder endpoint only."""

    SESSION_START = "session.start"
    TRANSCRIPT_APPEND = "transcript.append"
    SESSION_END = "session.end"
    SESSION_FACTS_SET = "session_facts.set"
    SESSION_FACTS_CLEAR = "session_facts.clear"
    SCENE_SET = "scene.set"


class NameStyle(StrEnum):
    DOTTED = "dotted"
    UNDERSCORE = "underscore"


_BY_SPELLING = {spelling: tool for tool in ToolName for spelling in (tool.value, tool.underscored)}
_RECORDER_BY_SPELLING = {
    spelling: tool for tool in RecorderToolName for spelling in (tool.value, tool.underscored)
}


def canonical(name: str) -> ToolName | None:
    """The tool a name refers to under either spelling; None for a name that is not ours."""
    return _BY_SPELLING.get(name)


def canonical_recorder(name: str) -> RecorderToolName | None:
    return _RECORDER_BY_SPELLING.get(name)


def advertised(tool: DottedName, style: NameStyle) -> str:
    return tool.underscored if style is NameStyle.UNDERSCORE else tool.value
