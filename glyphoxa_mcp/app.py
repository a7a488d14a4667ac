"""The application: the pieces every entry point needs, made once from the settings built at
start-up (`config.Settings`): the database, the embedder, the LLM, each campaign's memory.

`serve`, `demo`, the bench and the evaluation all start with `open_app(settings)` and ask
the `App` for memories and views, instead of each wiring the database and providers itself.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from glyphoxa_mcp.config import Settings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.embedding_model import check_embedding_model
from glyphoxa_mcp.providers.chat import ChatModel
from glyphoxa_mcp.providers.embeddings import Embedder, make_embedder
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from glyphoxa_mcp.storage.fact_vectors import FactVectors, RelationshipVectors
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View

log = logging.getLogger(__name__)


@dataclass
class App:
    settings: Settings
    db: Database
    embedder: Embedder
    chat: ChatModel | None
    _memories: dict[str, CampaignMemory] = field(default_factory=dict)

    def memory(self, campaign_id: str) -> CampaignMemory:
        """The campaign's memory, one per campaign for the life of the app, so every view of
        it shares its caches."""
        memory = self._memories.get(campaign_id)
        if memory is None:
            memory = self._memories[campaign_id] = CampaignMemory(self.db, campaign_id)
        return memory

    def access_tokens(self) -> AccessTokens:
        """Every campaign's bearer tokens, for the token gate of `serve` and `web`."""
        return AccessTokens(self.db)

    async def view(self, campaign_id: str, npc_id: str | None = None) -> View:
        """What `npc_id` (None: the DM) may read of the campaign; NotFoundError when the
        campaign does not exist."""
        return await View.open(self.memory(campaign_id), npc_id, self.embedder)

    async def warm_up(self) -> None:
        """Load the offline embedding model now (seconds on a busy machine), not in the first
        search, which a tier's deadline would cancel. A remote embedder is not called. Says
        when facts or relationships wait for a vector (search_facts finds those by words
        alone until `backfill-embeddings` embeds them)."""
        if self.settings.embedding.resolved_provider == "local":
            await self.embedder.embed(["warm up"])
        facts = await FactVectors(self.db).count_missing()
        relationships = await RelationshipVectors(self.db).count_missing()
        if facts or relationships:
            log.warning(
                "%d facts and %d relationships have no vector yet (written before they were "
                "embedded, or while the embedder was down): search_facts finds them by words "
                "alone until `glyphoxa-mcp backfill-embeddings` embeds them",
                facts,
                relationships,
            )


@contextlib.asynccontextmanager
async def open_app(settings: Settings, *, max_connections: int = 10) -> AsyncIterator[App]:
    """The application over the configured database, closed on the way out."""
    async with await Database.open(settings.database, max_size=max_connections) as db:
        embedder = make_embedder(settings.embedding, db.embedding_dim)
        await check_embedding_model(db, embedder.model)
        chat = ChatModel(settings.chat) if settings.chat.configured else None
        yield App(settings, db, embedder, chat)
