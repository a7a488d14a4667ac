"""The read service: everything one viewer may read of one campaign, in one place.

Every entry point that reads memory for someone (the MCP tools and resources, the bench, the
evaluation, the bridge) asks a `View` for it, so scope, redaction, the rumour rule and the
normalising of arguments are decided here once rather than by each caller. A View is cheap:
what is expensive to build (the viewer's scope, an NPC's knowledge) is cached per campaign
in its memory's versioned caches, keyed by viewer, and shared by every View of that viewer.
"""

from __future__ import annotations

import gc

from glyphoxa_mcp.correction.english import load_word_frequencies
from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS
from glyphoxa_mcp.domain.rumours import RumourRule
from glyphoxa_mcp.domain.vocabulary import EntityType
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
from glyphoxa_mcp.views.reading import Reader, Reading
from glyphoxa_mcp.views.results import (
    QueryEntitiesResult,
    SearchFactsResult,
    SearchSessionsResult,
    SessionSummaryResult,
)
from glyphoxa_mcp.views.scope import Scope


class View:
    """One viewer's reads of one campaign: an NPC's (`npc_id`) or, with None, the DM's.

    Each read is composed here: the read function is given the viewer's `Reader` and reads
    the viewer's scope once, where it first needs it, passing that `Reading` down; none
    calls back into the View (views/reading.py)."""

    def __init__(
        self,
        memory: CampaignMemory,
        npc_id: str | None = None,
        embedder: Embedder | None = None,
        rumours: RumourRule | None = None,
        search_tuning: SessionSearchTuning = SHIPPED_TUNING,
    ) -> None:
        self.reader = Reader(memory, npc_id, embedder, rumours or RumourRule(), search_tuning)
        self._last_hot: LastGood[HotContext] = LastGood()

    @classmethod
    async def open(
        cls, memory: CampaignMemory, npc_id: str | None = None, embedder: Embedder | None = None
    ) -> View:
        """A view under the campaign's own rumour rule (its review threshold)."""
        campaign = await memory.campaign()
        return cls(memory, npc_id, embedder, RumourRule(threshold=campaign.review_threshold))

    @property
    def memory(self) -> CampaignMemory:
        return self.reader.memory

    @property
    def npc_id(self) -> str | None:
        return self.reader.npc_id

    @property
    def embedder(self) -> Embedder | None:
        return self.reader.embedder

    @property
    def rumours(self) -> RumourRule:
        return self.reader.rumours

    @property
    def search_tuning(self) -> SessionSearchTuning:
        return self.reader.search_tuning

    @property
    def label(self) -> str:
        """Whose view this is, as results name it: 'dm' or 'npc:<id>'."""
        return self.reader.label

    def of_npc(self, npc_id: str) -> View:
        """The same campaign as `npc_id` sees it."""
        return View(self.memory, npc_id, self.embedder, self.rumours, self.search_tuning)

    async def scope(self) -> Scope:
        """This viewer's scope."""
        return await self.reader.scope()

    async def reading(self) -> Reading:
        """This viewer with its scope, read once: what one call's reads are given."""
        return await self.reader.reading()

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
            self.reader, query, top_k, session_id, speaker, npc_id, after, before, graph_expansion
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
        return await entity_query.EntityQuery(self.reader).run(
            name, entity_type, related_to, relation, depth, limit
        )

    async def session_summary(
        self, session_id: str | None = None, sessions_ago: int | None = None
    ) -> SessionSummaryResult:
        return await session_summary.session_summary(self.reader, session_id, sessions_ago)

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
        return await fact_search.search_facts(
            self.reader, query, top_k, entity, after, before, session_id
        )

    async def hot_context(
        self, npc_id: str, session_id: str | None = None, budgets: HotBudgets | None = None
    ) -> HotContext:
        budgets = budgets or HotBudgets()
        context = await HotLayer(self.reader, budgets).build(npc_id, session_id)
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
        return await prefetch_context(self.reader, npc_id, utterance)

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
