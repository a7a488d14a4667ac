"""What every tool and resource of one server shares: the campaign's memory, whose knowledge
applies, and the tier's limits. Built by the host, handed to the server's lifespan."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from glyphoxa_mcp.errors import ConfigurationError, GlyphoxaError, InvalidInputError
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.redaction import SHOW_EVERYTHING, Redactor
from glyphoxa_mcp.server.tiers import TierPolicy
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import Entity

DEFAULT_REVIEW_THRESHOLD = 0.7


@dataclass(frozen=True)
class ServerState:
    memory: CampaignMemory
    npc_id: str | None
    policy: TierPolicy
    embedder: Embedder | None = None
    review_threshold: float = DEFAULT_REVIEW_THRESHOLD

    async def embed_query(self, query: str) -> list[float]:
        if self.embedder is None:
            raise ConfigurationError("This server has no embedder configured.")
        return (await self.embedder.embed([query]))[0]

    @property
    def scope(self) -> str:
        return "dm" if self.npc_id is None else f"npc:{self.npc_id}"

    async def view(self) -> Scope:
        """This server's scope; read it once per call and pass it along."""
        return await scope_of(self.memory, self.npc_id)


@dataclass(frozen=True)
class Scope:
    """One NPC's knowledge (None: the DM's): the entities it may know, the ids it may not,
    and a redactor for the hidden names in free text."""

    known: tuple[Entity, ...]
    hidden_ids: frozenset[str]
    redactor: Redactor


async def scope_of(memory: CampaignMemory, npc_id: str | None) -> Scope:
    known = tuple(await memory.queries.entity_names(npc_id))
    if npc_id is None:
        return Scope(known, frozenset(), SHOW_EVERYTHING)
    visible = {e.id for e in known}
    hidden = [e for e in await memory.queries.entity_names() if e.id not in visible]
    return Scope(
        known,
        frozenset(entity.id for entity in hidden),
        Redactor.hiding(s for entity in hidden for s in (entity.name, *entity.aliases)),
    )


def state_of(ctx: Context[Any, Any]) -> ServerState:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, ServerState), "the server's lifespan must yield a ServerState"
    return state


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """Our errors become tool errors: the model reads the message; no traceback is logged."""
    try:
        yield
    except GlyphoxaError as exc:
        raise ToolError(str(exc)) from exc


def search_query(query: str) -> str | None:
    """The query to run, or None when it is blank (the tool answers with a note)."""
    if "\x00" in query:
        raise InvalidInputError("query must not contain NUL characters.", field="query")
    return query.strip() or None
