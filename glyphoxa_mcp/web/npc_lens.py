"""The campaign as one NPC sees it: its hot context and what each memory tool answers it,
asked of the same MCP server its endpoint runs (its view, the tier's tools and limits),
through an in-memory client, so the page shows what the NPC's model would read; and what
it knows of each session, as `memory.get_session_summary` answers it. Only the deadline is
not the tier's: the DM looks at what the NPC knows, which a busy desk's timeout would hide."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent, TextResourceContents
from pydantic import BaseModel, ValidationError

from glyphoxa_mcp.app import App
from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.models import Entity, Session
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.tool_names import ToolName
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.resource_uris import hot_uri
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.views.results import (
    QueryEntitiesResult,
    SceneKnowledge,
    SearchFactsResult,
    SearchSessionsResult,
    SessionSummaryResult,
)
from glyphoxa_mcp.views.view import View

LOOKING_DEADLINE_MS = 30_000

# What each tool answers, read back from its structured content to be shown readably.
ToolResult = QueryEntitiesResult | SearchSessionsResult | SearchFactsResult | SessionSummaryResult
RESULTS: dict[ToolName, type[BaseModel]] = {
    ToolName.QUERY_ENTITIES: QueryEntitiesResult,
    ToolName.SEARCH_SESSIONS: SearchSessionsResult,
    ToolName.SEARCH_FACTS: SearchFactsResult,
    ToolName.GET_SESSION_SUMMARY: SessionSummaryResult,
}


@dataclass(frozen=True)
class Answer:
    tool: str
    arguments: dict[str, Any]
    text: str
    """What the tool answered as text: its JSON, indented, or its refusal."""
    refused: bool
    result: ToolResult | None = None
    """The answer as the tool's result model, to render; None when refused."""


@dataclass(frozen=True)
class PromptSection:
    heading: str
    text: str


@dataclass(frozen=True)
class SessionKnown:
    """What an NPC knows of one session, as `memory.get_session_summary` answers it."""

    session: Session
    known: Literal["all of it", "some scenes", "heard of", "nothing"]
    why: str
    scenes: tuple[SceneKnowledge, ...] = ()


@dataclass(frozen=True)
class NpcLens:
    npc: Entity
    tier: Tier
    prompt: str
    """The hot context's prompt block; the whole context as JSON is `hot_json`."""
    hot_json: str
    answers: tuple[Answer, ...]
    sessions: tuple[SessionKnown, ...]

    @property
    def sections(self) -> list[PromptSection]:
        return prompt_sections(self.prompt)


def tool_calls(query: str | None) -> list[tuple[ToolName, dict[str, Any]]]:
    """Each tool, asked the way a model would ask it about `query`."""
    calls: list[tuple[ToolName, dict[str, Any]]] = [(ToolName.GET_SESSION_SUMMARY, {})]
    if query:
        calls = [
            (ToolName.QUERY_ENTITIES, {"name": query}),
            (ToolName.SEARCH_SESSIONS, {"query": query}),
            (ToolName.SEARCH_FACTS, {"query": query}),
            *calls,
        ]
    return calls


def prompt_sections(prompt: str) -> list[PromptSection]:
    """The prompt cut at its '## ' headings (what comes before the first has none)."""
    sections: list[PromptSection] = []
    heading = ""
    lines: list[str] = []
    for line in prompt.splitlines():
        if line.startswith("## "):
            if heading or any(lines):
                sections.append(PromptSection(heading, "\n".join(lines).strip("\n")))
            heading, lines = line.removeprefix("## ").strip(), []
        else:
            lines.append(line)
    if heading or any(lines):
        sections.append(PromptSection(heading, "\n".join(lines).strip("\n")))
    return sections


def session_known(
    session: Session, summary: SessionSummaryResult | None, knowledge: Knowledge
) -> SessionKnown:
    """What the answer of `memory.get_session_summary` for `session` (None: it refused, the
    session withheld from the NPC) says the NPC knows of it."""
    if summary is None:
        return SessionKnown(session, "nothing", "the session is kept to the DM")
    if summary.scenes is None:
        why = (
            "the campaign is shared: every NPC reads every line"
            if knowledge is Knowledge.SHARED
            else "it was at every scene"
        )
        return SessionKnown(session, "all of it", why)
    scenes = tuple(summary.scenes)
    if not scenes:
        return SessionKnown(
            session, "nothing", "it was at none of its scenes, and no word of them reached it"
        )
    witnessed = sum(1 for scene in scenes if scene.known == "witnessed")
    if witnessed:
        return SessionKnown(session, "some scenes", f"it was at {witnessed} of them", scenes)
    tellers = list(dict.fromkeys(scene.heard_from or "" for scene in scenes))
    return SessionKnown(session, "heard of", f"from {' and '.join(tellers)}", scenes)


def _readable(text: str) -> str:
    """JSON indented for reading; other text as it is."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def _result(tool: ToolName, structured: dict[str, Any] | None) -> ToolResult | None:
    if structured is None:
        return None
    try:
        return RESULTS[tool].model_validate(structured)  # type: ignore[return-value]
    except ValidationError:  # shown as the JSON it is, beside nothing to render
        return None


async def look_as(
    app: App,
    campaign: str,
    npc: Entity,
    tier: Tier,
    query: str | None,
    sessions: Sequence[Session],
    knowledge: Knowledge,
) -> NpcLens:
    """`npc`'s view at `tier`, asked about `query`, and what it knows of each of
    `sessions`."""
    view = await app.view(campaign, npc.id)
    # The scope is built once per NPC (seconds at 10,000 entities), before the calls that
    # would otherwise spend their tier's deadline on it.
    await view.scope()
    server = build_server(ServerState(view, tier_policy(tier, LOOKING_DEADLINE_MS)))
    async with Client(server) as client:
        try:
            hot = await client.read_resource(hot_uri(npc.id))
        except MCPError as exc:  # the NPC's model would read this refusal instead
            hot_json: dict[str, Any] = {"error": str(exc)}
        else:
            [contents] = hot.contents
            text = contents.text if isinstance(contents, TextResourceContents) else "{}"
            hot_json = json.loads(text)
        answers = []
        for tool, arguments in tool_calls(query):
            result = await client.call_tool(tool.value, arguments)
            text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
            answers.append(
                Answer(
                    tool.value,
                    arguments,
                    _readable(text),
                    result.is_error,
                    None if result.is_error else _result(tool, result.structured_content),
                )
            )
    return NpcLens(
        npc=npc,
        tier=tier,
        prompt=str(hot_json.get("prompt") or hot_json.get("error", "")),
        hot_json=json.dumps(hot_json, indent=2, ensure_ascii=False),
        answers=tuple(answers),
        sessions=tuple([await _session_known(view, s, knowledge) for s in sessions]),
    )


async def _session_known(view: View, session: Session, knowledge: Knowledge) -> SessionKnown:
    """Through the tool's own read, whatever the tier lists: what the NPC knows of a
    session does not depend on which tools its endpoint offers."""
    try:
        summary = await view.session_summary(session_id=session.id)
    except NotFoundError:
        return session_known(session, None, knowledge)
    return session_known(session, summary, knowledge)
