"""What a read function is given instead of the View that calls it: who reads and by which
rules (a `Reader`), and, for one call, that reader with its scope read once (a `Reading`).

`View` (views/view.py) composes the reads: it hands its `Reader` to the read function
(session_search, fact_search, entity_query, session_summary, hot_context, prefetch), which
reads the scope once, as a `Reading`, where it first needs it (after its own arguments are
checked, so a blank query or a bad argument is answered before anything is read) and
passes that `Reading` down; the hot context and the pre-fetch make the `Reading` of the NPC
they read as. No read function calls back into the View, and none reads the scope a second
time (tests/server/test_request_path.py counts).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import anyio

from glyphoxa_mcp.domain.models import NO_FILTERS, Entity, Provenance, SearchFilters, Visibility
from glyphoxa_mcp.domain.rumours import RumourRule
from glyphoxa_mcp.errors import ConfigurationError, ProviderError
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.search_tuning import SHIPPED_TUNING, SessionSearchTuning
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.results import ProvenanceView
from glyphoxa_mcp.views.scope import Scope, scope_of

log = logging.getLogger(__name__)
T = TypeVar("T")
# Who told an NPC what it heard of, when it does not know who did.
WORD_GOING_AROUND = "word going around"
# Of the time a call has left, what a query's embedding may take before words alone rank.
EMBED_SHARE_OF_TIME_LEFT = 0.5


@dataclass(frozen=True)
class Reader:
    """One viewer of one campaign, an NPC's (`npc_id`) or, with None, the DM's, and the rules
    its reads follow: the rumour rule, the query embedder, the session search's tuning."""

    memory: CampaignMemory
    npc_id: str | None = None
    embedder: Embedder | None = None
    rumours: RumourRule = dataclasses.field(default_factory=RumourRule)
    search_tuning: SessionSearchTuning = SHIPPED_TUNING

    @property
    def label(self) -> str:
        """Whose view this is, as results name it: 'dm' or 'npc:<id>'."""
        return "dm" if self.npc_id is None else f"npc:{self.npc_id}"

    def of_npc(self, npc_id: str) -> Reader:
        """The same campaign, read as `npc_id` knows it."""
        return self if npc_id == self.npc_id else dataclasses.replace(self, npc_id=npc_id)

    async def scope(self) -> Scope:
        """This viewer's scope (cached per campaign, see views/scope.py)."""
        return await scope_of(self.memory, self.npc_id)

    async def reading(self) -> Reading:
        """One call's reading: this reader with its scope, read now, once, and the
        campaign's knowledge counter with it (one statement for both)."""
        versions = await self.memory.versions()
        scope = await scope_of(self.memory, self.npc_id, versions.entities)
        return Reading(self, scope, versions.knowledge)

    async def embed_query(self, query: str) -> list[float]:
        if self.embedder is None:
            raise ConfigurationError("This server has no embedder configured.")
        return (await self.embedder.embed([query]))[0]

    async def embed_query_if_able(self, query: str) -> list[float] | None:
        """The query's vector, or None when the embedder fails or would take more than half
        the time left before the call's deadline: a search then ranks by words alone rather
        than fail or run out of time (a remote embedder down, or slow under load)."""
        if self.embedder is None:  # a server set up without one: words alone, no warning
            return None
        deadline = anyio.current_effective_deadline()
        limit = (deadline - anyio.current_time()) * EMBED_SHARE_OF_TIME_LEFT
        with anyio.move_on_after(limit if math.isfinite(limit) else None):
            try:
                return await self.embed_query(query)
            except (ProviderError, ConfigurationError) as exc:  # down, refused, or none set
                log.warning("searching by words alone: %s", exc)
                return None
        log.warning("searching by words alone: the embedder took longer than %.2f s", limit)
        return None

    def provenance(
        self,
        provenance: Provenance,
        visibility: Visibility | None = None,
        names: Mapping[str, Entity] | None = None,
    ) -> ProvenanceView:
        """How this viewer came to know something (`visibility`: who may know it; `names`:
        the entities it knows, to name who told it what it only heard of)."""
        heard, teller = (
            (False, None)
            if visibility is None or self.npc_id is None
            else visibility.heard_of_by(self.npc_id)
        )
        told_by = (names or {}).get(teller) if teller is not None else None
        return ProvenanceView(
            session_id=provenance.session_id,
            confidence=provenance.confidence,
            source=provenance.source,
            dm_confirmed=provenance.dm_confirmed,
            unconfirmed=heard or self.rumours.is_rumour(provenance),
            heard_from=(told_by.name if told_by else WORD_GOING_AROUND) if heard else None,
        )


@dataclass(frozen=True)
class Reading:
    """A `Reader` with its scope, read once for one call and passed down to everything the
    call reads."""

    reader: Reader
    scope: Scope
    # The campaign's knowledge counter (sql/015) as this call read it: what the call asks
    # of the knowledge caches is kept by it.
    knowledge_version: int

    @property
    def memory(self) -> CampaignMemory:
        return self.reader.memory

    @property
    def npc_id(self) -> str | None:
        return self.reader.npc_id

    @property
    def label(self) -> str:
        return self.reader.label

    def withheld_among(self, dm_only_by_id: Mapping[str, bool]) -> frozenset[str]:
        """Of these sessions (id -> DM-only), those this viewer may not read at all: those
        the DM keeps to themselves, and those whose id names something hidden from it (an id
        cannot be redacted)."""
        if self.npc_id is None:
            return frozenset()
        redactor = self.scope.redactor
        return frozenset(
            session_id
            for session_id, dm_only in dm_only_by_id.items()
            if dm_only or redactor.mentions_hidden(session_id)
        )

    async def withheld_sessions(self) -> frozenset[str]:
        """The sessions of the campaign this viewer may not read at all (`withheld_among`),
        kept while the knowledge counter stands still: sessions added, deleted or given to
        the DM alone move it (sql/038), and so do the entities that decide what an id
        names."""
        if self.npc_id is None:
            return frozenset()

        async def read() -> frozenset[str]:
            return self.withheld_among(await self.memory.sessions.dm_only_by_id())

        return await self.memory.knowledge_parts.get(
            ("withheld sessions", self.npc_id), read, self.knowledge_version
        )

    async def knowledge_kept(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> T:
        """What `compute` derives from what this viewer knows, kept under `key` (which
        names the viewer) while the knowledge counter stands still."""
        return await self.memory.knowledge_cache.get(key, compute, self.knowledge_version)

    def transcript_filters(
        self, withheld: frozenset[str], filters: SearchFilters = NO_FILTERS
    ) -> SearchFilters:
        """`filters` narrowed to the lines and passages this viewer may read (`withheld`:
        its `withheld_sessions()`)."""
        if self.npc_id is None:
            return filters
        return filters.model_copy(
            update={"reader": self.npc_id, "withheld_sessions": tuple(sorted(withheld))}
        )
