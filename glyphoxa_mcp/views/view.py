"""The read service: everything one viewer may read of one campaign, in one place.

Every entry point that reads memory for someone (the MCP tools and resources, the bench, the
evaluation, the bridge) asks a `View` for it, so scope, redaction, the rumour rule and the
normalising of arguments are decided here once rather than by each caller. A View is cheap:
what is expensive to build (the viewer's scope, an NPC's knowledge) is cached per campaign
in its memory's versioned caches, keyed by viewer, and shared by every View of that viewer.
"""

from __future__ import annotations

import gc
import logging
import math

import anyio

from glyphoxa_mcp.correction.english import load_word_frequencies
from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS
from glyphoxa_mcp.domain.models import NO_FILTERS, Provenance, SearchFilters
from glyphoxa_mcp.domain.rumours import RumourRule
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import ConfigurationError, ProviderError
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.hot_budgets import HotBudgets
from glyphoxa_mcp.recall.search_tuning import SHIPPED_TUNING, SessionSearchTuning
from glyphoxa_mcp.recall.speech_terms import speech_terms
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views import entity_query, fact_search, session_search, session_summary
from glyphoxa_mcp.views.hot_context import HotContext, HotLayer
from glyphoxa_mcp.views.last_good import LastGood
from glyphoxa_mcp.views.limits import Clamped
from glyphoxa_mcp.views.prefetch import PrefetchContext, prefetch_context
from glyphoxa_mcp.views.results import (
    ProvenanceView,
    QueryEntitiesResult,
    SearchFactsResult,
    SearchSessionsResult,
    SessionSummaryResult,
)
from glyphoxa_mcp.views.scope import Scope, scope_of

log = logging.getLogger(__name__)
# Of the time a call has left, what a query's embedding may take before words alone rank.
EMBED_SHARE_OF_TIME_LEFT = 0.5


class View:
    """One viewer's reads of one campaign: an NPC's (`npc_id`) or, with None, the DM's."""

    def __init__(
        self,
        memory: CampaignMemory,
        npc_id: str | None = None,
        embedder: Embedder | None = None,
        rumours: RumourRule | None = None,
        search_tuning: SessionSearchTuning = SHIPPED_TUNING,
    ) -> None:
        self.memory = memory
        self.npc_id = npc_id
        self.embedder = embedder
        self.rumours = rumours or RumourRule()
        self._last_hot: LastGood[HotContext] = LastGood()
        self.search_tuning = search_tuning

    @classmethod
    async def open(
        cls, memory: CampaignMemory, npc_id: str | None = None, embedder: Embedder | None = None
    ) -> View:
        """A view under the campaign's own rumour rule (its review threshold)."""
        campaign = await memory.campaign()
        return cls(memory, npc_id, embedder, RumourRule(threshold=campaign.review_threshold))

    @property
    def label(self) -> str:
        """Whose view this is, as results name it: 'dm' or 'npc:<id>'."""
        return "dm" if self.npc_id is None else f"npc:{self.npc_id}"

    def of_npc(self, npc_id: str) -> View:
        """The same campaign as `npc_id` sees it."""
        return View(self.memory, npc_id, self.embedder, self.rumours, self.search_tuning)

    async def scope(self) -> Scope:
        """This viewer's scope; read it once per call and pass it along."""
        return await scope_of(self.memory, self.npc_id)

    async def withheld_sessions(self) -> frozenset[str]:
        """The sessions this viewer may not read at all: those the DM keeps to themselves,
        and those whose id names something hidden from it (an id cannot be redacted)."""
        if self.npc_id is None:
            return frozenset()
        redactor = (await self.scope()).redactor
        return frozenset(
            session_id
            for session_id, dm_only in (await self.memory.sessions.dm_only_by_id()).items()
            if dm_only or redactor.mentions_hidden(session_id)
        )

    def transcript_filters(
        self, withheld: frozenset[str], filters: SearchFilters = NO_FILTERS
    ) -> SearchFilters:
        """`filters` narrowed to the lines and passages this viewer may read (`withheld`:
        its `withheld_sessions()`)."""
        if self.npc_id is None:
            return filters
        return filters.model_copy(
            update={"include_dm_only": False, "withheld_sessions": tuple(sorted(withheld))}
        )

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

    def provenance(self, provenance: Provenance) -> ProvenanceView:
        return ProvenanceView(
            session_id=provenance.session_id,
            confidence=provenance.confidence,
            source=provenance.source,
            dm_confirmed=provenance.dm_confirmed,
            unconfirmed=self.rumours.is_rumour(provenance),
        )

    async def warm_up(self) -> None:
        """Build this viewer's scope and what is built from it now, before the first call
        would have to (seconds with 10,000 entities, more than a tier's deadline)."""
        scope = await self.scope()
        _ = scope.names, scope.mentions, scope.by_type
        # The pre-fetch corrects names in what it is given: the word list (half a second to
        # load) and the prepared names are ready before the first one.
        load_word_frequencies()
        SHARED_CORRECTORS.for_entities(scope.known)
        # What was built lives as long as the server: out of the cyclic collector's sight,
        # whose full passes over it paused calls for about 320 ms at 10,000 entities (39 ms
        # frozen). Objects made later are collected as usual.
        gc.freeze()

    async def search_sessions(
        self,
        query: str,
        top_k: Clamped,
        *,
        session_id: str | None = None,
        speaker: str | None = None,
        npc_id: str | None = None,
        after: str | None = None,
        before: str | None = None,
        graph_expansion: bool = False,
    ) -> SearchSessionsResult:
        return await session_search.search_sessions(
            self, query, top_k, session_id, speaker, npc_id, after, before, graph_expansion
        )

    async def query_entities(
        self,
        limit: Clamped,
        depth: Clamped,
        *,
        name: str | None = None,
        entity_type: EntityType | None = None,
        related_to: str | None = None,
        relation: str | None = None,
    ) -> QueryEntitiesResult:
        return await entity_query.EntityQuery(self).run(
            name, entity_type, related_to, relation, depth, limit
        )

    async def session_summary(
        self, session_id: str | None = None, sessions_ago: int | None = None
    ) -> SessionSummaryResult:
        return await session_summary.session_summary(self, session_id, sessions_ago)

    async def search_facts(
        self,
        query: str,
        top_k: Clamped,
        *,
        entity: str | None = None,
        after: str | None = None,
        before: str | None = None,
        session_id: str | None = None,
    ) -> SearchFactsResult:
        return await fact_search.search_facts(self, query, top_k, entity, after, before, session_id)

    async def hot_context(
        self, npc_id: str, session_id: str | None = None, budgets: HotBudgets | None = None
    ) -> HotContext:
        budgets = budgets or HotBudgets()
        context = await HotLayer(self, budgets).build(npc_id, session_id)
        self._last_hot.keep((npc_id, session_id, budgets.model_dump_json()), context)
        return context

    def last_hot_context(
        self, npc_id: str, session_id: str | None = None, budgets: HotBudgets | None = None
    ) -> HotContext | None:
        """The hot context this view last built for these arguments, marked degraded with its
        age: what an NPC keeps of itself while memory is unavailable. It is what the NPC
        could know when it was built."""
        found = self._last_hot.get(
            (npc_id, session_id, (budgets or HotBudgets()).model_dump_json())
        )
        if found is None:
            return None
        context, age_s = found
        return context.model_copy(update={"degraded": True, "age_s": round(age_s, 1)})

    def forget_last_hot_contexts(self) -> None:
        """Drop the hot contexts kept for an outage: lines they quote were removed."""
        self._last_hot.clear()

    async def prefetch(self, npc_id: str, utterance: str) -> PrefetchContext:
        return await prefetch_context(self, npc_id, utterance)

    async def speech_terms(self) -> list[str]:
        """The names and aliases this viewer may know, as a speech-to-text keyword list:
        people first, then places, things, factions, quests and lore. Episodes are left
        out: their names are session titles, not words anyone says."""
        by_type = (await self.scope()).by_type
        return speech_terms(
            entity
            for entity_type in EntityType
            if entity_type is not EntityType.EVENT
            for entity in by_type.get(entity_type, ())
        )
