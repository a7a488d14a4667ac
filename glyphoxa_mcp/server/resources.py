"""The hot layer as MCP resources: one template per NPC, and the list of NPCs (their URIs and
kinds: server/resource_uris.py)."""

from __future__ import annotations

import contextlib
import json
import logging
import math
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import (
    CallDeadlineError,
    DatabaseUnavailableError,
    DeadlineExceeded,
    InvalidInputError,
    NotFoundError,
)
from glyphoxa_mcp.recall.hot_budgets import HotBudgets
from glyphoxa_mcp.server.outcomes import READ_PAST_DEADLINE, is_bug, outcome, told
from glyphoxa_mcp.server.resource_uris import (
    HOT_URI_TEMPLATE,
    NPCS_URI,
    PARAMETERS,
    PREFETCH_URI_TEMPLATE,
    RESOURCE_NOT_FOUND,
    VOCABULARY_URI,
    hot_uri,
)
from glyphoxa_mcp.views.view import View

JSON = "application/json"
# The parameters are ids and free text, never paths: the SDK's path checks would refuse an
# utterance such as "/me waves" or "I: think". server/resource_uris.py checks them instead
# (in the argument gate); RESOURCE_NOT_FOUND is answered as the connection's protocol asks.
NOT_PATHS = ResourceSecurity(exempt_params=PARAMETERS)
T = TypeVar("T")
log = logging.getLogger(__name__)


@contextlib.contextmanager
def resource_errors() -> Iterator[None]:
    """A read's failure as the same typed outcomes and sentences a tool call gets
    (server/outcomes.py): something not found or a bad parameter as the protocol's errors,
    the rest as the read's error."""
    try:
        yield
    except Exception as exc:
        error = outcome(exc, past_deadline=CallDeadlineError(READ_PAST_DEADLINE))
        if is_bug(exc, error):
            log.exception("a resource read failed unexpectedly")
        if isinstance(error, NotFoundError):
            raise MCPError(RESOURCE_NOT_FOUND, told(error)) from exc
        if isinstance(error, InvalidInputError):
            raise MCPError(INVALID_PARAMS, told(error)) from exc
        raise ResourceError(told(error)) from exc


def register_resources(
    server: MCPServer, view: View, budgets: HotBudgets, deadline_ms: int | None = None
) -> None:
    """Each read answers within `deadline_ms` (unbounded: None); the hot context, when it
    cannot be built in time or memory is unavailable, is the last one built, marked
    degraded, so a voice NPC keeps its identity through an outage."""
    guard = view.memory.db.guard
    deadline_s = deadline_ms / 1000 if deadline_ms is not None else math.inf

    async def bounded(call: Callable[[], Awaitable[T]]) -> T:
        return await guard.within(deadline_s, call)

    @server.resource(
        HOT_URI_TEMPLATE,
        name="npc_hot_context",
        security=NOT_PATHS,
        title="An NPC's hot context",
        description=(
            "What goes into every prompt of this NPC: who it is (identity snapshot), where it "
            "is (location, who is present, active quests) and the last minutes of the current "
            "session, within token budgets and the NPC's own knowledge. JSON, with the "
            "rendered prompt block under 'prompt'. Subscribe to hear when it changes."
        ),
        mime_type=JSON,
    )
    async def npc_hot_context(npc_id: str, session: str | None = None) -> str:
        with resource_errors():
            try:
                context = await bounded(lambda: view.hot_context(npc_id, session or None, budgets))
            except (DatabaseUnavailableError, DeadlineExceeded):
                last = view.last_hot_context(npc_id, session or None, budgets)
                if last is None:
                    raise
                context = last
        return context.model_dump_json()

    @server.resource(
        PREFETCH_URI_TEMPLATE,
        name="npc_prefetch",
        security=NOT_PATHS,
        title="Context an NPC is about to need",
        description=(
            "For the orchestrator, while a player is still speaking: given the partial "
            "utterance, the known entities it names (as this NPC knows them) and, when it "
            "names someone or points to the past ('do you remember...'), the most likely "
            "passages of earlier sessions. JSON with a prompt block under 'prompt'."
        ),
        mime_type=JSON,
    )
    async def npc_prefetch(npc_id: str, utterance: str = "") -> str:
        with resource_errors():
            context = await bounded(lambda: view.prefetch(npc_id, utterance))
        return context.model_dump_json()

    @server.resource(
        VOCABULARY_URI,
        name="campaign_vocabulary",
        title="The campaign's names, for speech-to-text",
        description=(
            "Every name and alias this endpoint may know, people first, as a keyword list for "
            "a speech-to-text service (Deepgram keyterms, AssemblyAI word boost), so names "
            "are heard right before they are transcribed. Subscribe to hear when the graph "
            "changes."
        ),
        mime_type=JSON,
    )
    async def campaign_vocabulary() -> str:
        with resource_errors():
            terms = await bounded(view.speech_terms)
        return json.dumps(
            {"campaign": view.memory.campaign_id, "scope": view.label, "terms": terms}
        )

    @server.resource(
        NPCS_URI,
        name="npcs",
        title="The campaign's NPCs",
        description="Every NPC in scope, with the URI of its hot context.",
        mime_type=JSON,
    )
    async def npcs() -> str:
        with resource_errors():
            entities = await bounded(
                lambda: view.memory.graph.find_entities(
                    type=EntityType.NPC, npc_id=view.npc_id, limit=10_000
                )
            )
        listed = [
            {"id": e.id, "name": e.name, "hot_context": hot_uri(e.id)}
            for e in entities
            if view.npc_id is None or e.id == view.npc_id
        ]
        return json.dumps(
            {"campaign": view.memory.campaign_id, "scope": view.label, "npcs": listed}
        )
