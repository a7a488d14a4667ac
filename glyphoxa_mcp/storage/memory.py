"""One campaign's memory: its sessions and the three layers, sharing one pool."""

from __future__ import annotations

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.entity_names import MAX_PATCHED, EntityNames
from glyphoxa_mcp.domain.models import Campaign, Entity
from glyphoxa_mcp.storage.campaigns import Campaigns, Sessions
from glyphoxa_mcp.storage.curation import Curation
from glyphoxa_mcp.storage.fact_queries import FactQueries
from glyphoxa_mcp.storage.graph_queries import GraphQueries
from glyphoxa_mcp.storage.knowledge_graph import KnowledgeGraph
from glyphoxa_mcp.storage.lore_queries import LoreQueries
from glyphoxa_mcp.storage.names_read_cache import NamesReadCache
from glyphoxa_mcp.storage.pending import PendingEntities
from glyphoxa_mcp.storage.semantic_index import SemanticIndex
from glyphoxa_mcp.storage.session_facts import SessionFacts
from glyphoxa_mcp.storage.session_log import SessionLog
from glyphoxa_mcp.storage.session_scenes import Scenes
from glyphoxa_mcp.storage.summary_parts import SummaryParts
from glyphoxa_mcp.storage.versioned_cache import (
    ENTITY_VERSION,
    KNOWLEDGE_VERSION,
    CampaignVersions,
    VersionedCache,
    campaign_versions,
)

# Small values kept while nothing an NPC knows changes, by viewer: an entity as
# memory.query_entities shows it (its JSON text: 3-8 KB with 8-25 relationships) and a
# walk's ids (strings, numbers and tuples of them, which the cyclic collector does not
# walk), the sessions an NPC may not read (a set per NPC). Calls that go round their
# entities in turn find nothing once those are more than are kept (the least recently used
# goes first): three viewers of the bench's workload ask for 867, so 512 kept none of them.
# 4096 is about 12-30 MiB; a small campaign never fills it.
PARTS_KEPT = 4096


class CampaignMemory:
    """Every store scoped to one campaign, so no call can reach another campaign's rows."""

    def __init__(self, db: Database, campaign_id: str) -> None:
        self.db = db
        self.campaign_id = campaign_id
        self._campaigns = Campaigns(db)
        self.sessions = Sessions(db, campaign_id)
        self.log = SessionLog(db, campaign_id)
        self.scenes = Scenes(db, campaign_id)
        self.summary_parts = SummaryParts(db, campaign_id)
        self.session_facts = SessionFacts(db, campaign_id)
        self.index = SemanticIndex(db, campaign_id)
        self.graph = KnowledgeGraph(db, campaign_id)
        self.queries = GraphQueries(db, campaign_id)
        self.facts = FactQueries(db, campaign_id)
        self.lore = LoreQueries(db, campaign_id)
        self.curation = Curation(db, campaign_id)
        self.pending = PendingEntities(db, campaign_id)
        self.names_read = NamesReadCache(db, campaign_id)
        # What depends on the entities alone, and what also on relationships and facts.
        self.entity_cache = VersionedCache(db, campaign_id, ENTITY_VERSION)
        self.knowledge_cache = VersionedCache(
            db, campaign_id, KNOWLEDGE_VERSION, keeps_outdated=False
        )
        # Many small values by the same counter, apart so they do not crowd out the above.
        self.knowledge_parts = VersionedCache(
            db, campaign_id, KNOWLEDGE_VERSION, capacity=PARTS_KEPT, keeps_outdated=False
        )

    async def versions(self) -> CampaignVersions:
        """The counters of the caches above, read together once for a call."""
        return await campaign_versions(self.db, self.campaign_id)

    async def campaign(self) -> Campaign:
        """This campaign's row: its name and settings."""
        return await self._campaigns.get(self.campaign_id)

    async def known_entities(self) -> list[Entity]:
        """Every entity of the campaign for name matching (attributes left out), in order of
        id; the same list object while no entity changes."""
        return (await self.entity_names()).entities

    async def entity_names(self) -> EntityNames:
        """The campaign's entities for name matching at the current version: read once, then
        patched with what the change log says changed (10,000 entities take a few hundred
        milliseconds to read; the few changed by an edit, a millisecond)."""
        return await self.entity_cache.get_updated(
            ("entities",), self._read_entity_names, self._updated_entity_names
        )

    async def _read_entity_names(self) -> EntityNames:
        # The version first: rows read after it can only be newer, and a later patch reads
        # again whatever changed after it.
        version = await self.entity_cache.version()
        return EntityNames.read(version, await self.queries.entity_names())

    async def _updated_entity_names(self, previous: EntityNames) -> EntityNames:
        changes = await self.queries.entity_changes(previous.version)
        if not changes.complete or len(changes.changed_ids) > MAX_PATCHED:
            return await self._read_entity_names()
        return previous.patched(changes)
