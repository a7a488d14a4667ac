"""What every tool and resource of one server shares: the campaign's memory, whose knowledge
applies, and the tier's limits. Built by the host, handed to the server's lifespan."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from glyphoxa_mcp.correction.english import load_word_frequencies
from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS
from glyphoxa_mcp.errors import ConfigurationError, GlyphoxaError, InvalidInputError
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.recall.names import NameIndex
from glyphoxa_mcp.recall.redaction import SHOW_EVERYTHING, Redactor
from glyphoxa_mcp.server.tiers import TierPolicy
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import Entity
from glyphoxa_mcp.storage.vocabulary import EntityType

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

    async def warm_up(self) -> None:
        """Build this server's scope and what is built from it now, before the first call
        would have to (seconds with 10,000 entities, more than a tier's deadline)."""
        scope = await self.view()
        _ = scope.names, scope.mentions, scope.by_type
        # The pre-fetch corrects names in what it is given: the word list (half a second to
        # load) and the prepared names are ready before the first one.
        load_word_frequencies()
        SHARED_CORRECTORS.for_entities(scope.known)


@dataclass(frozen=True)
class Scope:
    """One NPC's knowledge (None: the DM's): the entities it may know, the ids it may not,
    and a redactor for the hidden names in free text.

    Scopes are cached until an entity changes (see `scope_of`), so what is built from
    `known` for matching is built on first use and kept with it."""

    known: tuple[Entity, ...]
    hidden_ids: frozenset[str]
    redactor: Redactor

    @functools.cached_property
    def names(self) -> NameIndex:
        """The known entities' names, to resolve what a model calls one of them."""
        return NameIndex(self.known)

    @functools.cached_property
    def mentions(self) -> NamePattern:
        """The known entities' names, to find them in text."""
        return NamePattern.of_entities(self.known)

    @functools.cached_property
    def by_id(self) -> dict[str, Entity]:
        return {entity.id: entity for entity in self.known}

    @functools.cached_property
    def by_type(self) -> dict[EntityType, tuple[Entity, ...]]:
        """The known entities of each type, in alphabetical order."""
        grouped: dict[EntityType, list[Entity]] = {}
        for entity in sorted(self.known, key=lambda e: (e.name.lower(), e.id)):
            grouped.setdefault(entity.type, []).append(entity)
        return {entity_type: tuple(entities) for entity_type, entities in grouped.items()}


async def scope_of(memory: CampaignMemory, npc_id: str | None) -> Scope:
    """The scope of `npc_id` (None: the DM), computed once per version of the campaign's
    entities: loading 10,000 entities and compiling their names takes far longer than a
    tool call may."""
    return await memory.entity_cache.get(("scope", npc_id), lambda: _scope(memory, npc_id))


async def _scope(memory: CampaignMemory, npc_id: str | None) -> Scope:
    everyone = await memory.known_entities()
    if npc_id is None:
        return Scope(tuple(everyone), frozenset(), SHOW_EVERYTHING)
    # Which entities the NPC may know is decided in SQL, as everywhere else.
    visible = set(await memory.queries.visible_entity_ids(npc_id))
    hidden = [e for e in everyone if e.id not in visible]
    return Scope(
        tuple(e for e in everyone if e.id in visible),
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
