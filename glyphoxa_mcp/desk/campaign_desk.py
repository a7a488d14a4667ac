"""One campaign at the DM's desk: its memory, the LLM, and how to embed what the DM writes.

A command opens one from its settings (`CampaignDesk.open`); the web desk, and the commands
that run the whole application, take one over the `App` (`CampaignDesk.of`), sharing its
memory's caches with the views. The actions of `desk/` reach the stores through it; the
commands and pages only hand it on.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from glyphoxa_mcp.app import App
from glyphoxa_mcp.config import DatabaseSettings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import ConfigurationError, InvalidInputError, NotFoundError
from glyphoxa_mcp.pipeline.fact_embedding import write_embedder
from glyphoxa_mcp.providers.chat import ChatModel
from glyphoxa_mcp.providers.embeddings import Embedder, EmbeddingSettings, make_embedder
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory

# A refusal names at most this many campaigns, then how many more.
NAMED_CAMPAIGNS = 20


@dataclass(frozen=True)
class Embedding:
    """Where the embedder of an action comes from: one made already (the application's), or
    one made from settings read only when an action embeds, so that a command writing no
    fact never reads them (nor warns about them)."""

    made: Embedder | None = None
    settings: Callable[[], EmbeddingSettings] | None = None


@dataclass(frozen=True)
class CampaignDesk:
    memory: CampaignMemory
    embedding: Embedding = field(default_factory=Embedding)
    chat: ChatModel | None = None

    @property
    def campaign_id(self) -> str:
        return self.memory.campaign_id

    @property
    def db(self) -> Database:
        return self.memory.db

    async def write_embedder(self) -> Embedder | None:
        """For an action that stores facts or relationships, then embeds them: None (logged)
        when there is none, or the configured one cannot make this database's vectors; the
        write goes ahead and they wait for the backfill."""
        if self.embedding.made is not None:
            return self.embedding.made
        if self.embedding.settings is None:
            return None
        return await write_embedder(self.db, self.embedding.settings())

    def embedder(self) -> Embedder:
        """For an action that cannot go on without vectors; a configuration error raises."""
        if self.embedding.made is not None:
            return self.embedding.made
        if self.embedding.settings is None:
            raise ConfigurationError("This action embeds text, and no embedder was configured.")
        return make_embedder(self.embedding.settings(), self.db.embedding_dim)

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        database: DatabaseSettings,
        campaign_id: str | None,
        *,
        create: bool = False,
        embedding: Callable[[], EmbeddingSettings] | None = None,
    ) -> AsyncIterator[CampaignDesk]:
        """The campaign over its own small pool, closed on the way out; NotFoundError when
        it does not exist, unless `create`. `campaign_id` None is the only campaign there is
        (`only_campaign`): never one made here."""
        async with await Database.open(database, max_size=2) as db:
            if campaign_id is None:
                campaign_id = await only_campaign(db)
            elif create:
                await Campaigns(db).ensure(campaign_id)
            else:
                await Campaigns(db).get(campaign_id)
            yield cls(CampaignMemory(db, campaign_id), Embedding(settings=embedding))

    @classmethod
    async def of(cls, app: App, campaign_id: str) -> CampaignDesk:
        """The campaign in the application (its memory, embedder and LLM); NotFoundError
        when it does not exist."""
        memory = app.memory(campaign_id)
        await memory.campaign()
        return cls(memory, Embedding(made=app.embedder), app.chat)


async def only_campaign(db: Database) -> str:
    """The campaign a command that names none works on: the only one in the database. With
    none, NotFoundError saying how to start one; with several, InvalidInputError naming
    them. A campaign is never made here: a command that names none must not invent one."""
    campaigns = [campaign.id for campaign in await Campaigns(db).list()]
    if len(campaigns) == 1:
        return campaigns[0]
    if not campaigns:
        raise NotFoundError(
            "There is no campaign yet. Start one with `glyphoxa-mcp campaign load FILE "
            "--campaign ID` (`glyphoxa-mcp campaign sample` prints an example file), or give "
            "--campaign ID to a command that adds to it (`entity add`, `record`)."
        )
    named = ", ".join(campaigns[:NAMED_CAMPAIGNS])
    if len(campaigns) > NAMED_CAMPAIGNS:
        named += f" and {len(campaigns) - NAMED_CAMPAIGNS} more"
    raise InvalidInputError(
        f"--campaign: this database holds {len(campaigns)} campaigns ({named}); name one "
        "with --campaign ID or GLYPHOXA_CAMPAIGN.",
        field="--campaign",
    )
