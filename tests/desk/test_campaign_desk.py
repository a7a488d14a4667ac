"""One campaign at the DM's desk: opened from settings (made only when asked), and its
embedder made only when an action embeds."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.config import DatabaseSettings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk, Embedding
from glyphoxa_mcp.desk.entity_actions import add_entity, edit_entity
from glyphoxa_mcp.desk.name_actions import check_npc
from glyphoxa_mcp.domain.models import NewEntity, build
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import ConfigurationError, InvalidInputError, NotFoundError
from glyphoxa_mcp.providers.embeddings import EmbeddingSettings
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory


def settings_of(db: Database) -> DatabaseSettings:
    return DatabaseSettings.build(dsn=db.location.dsn, embedding_dim=db.embedding_dim)


async def test_opening_a_campaign_that_does_not_exist_is_refused_unless_it_is_to_be_made(
    db: Database,
) -> None:
    with pytest.raises(NotFoundError, match="nowhere"):
        async with CampaignDesk.open(settings_of(db), "nowhere"):
            pass
    async with CampaignDesk.open(settings_of(db), "nowhere", create=True) as desk:
        assert desk.campaign_id == "nowhere"
    async with CampaignDesk.open(settings_of(db), "nowhere") as desk:
        assert desk.db.embedding_dim == db.embedding_dim


async def test_without_a_campaign_named_the_only_one_is_opened_and_none_is_ever_made(
    db: Database,
) -> None:
    with pytest.raises(NotFoundError, match=r"no campaign yet\. Start one with .*campaign load"):
        async with CampaignDesk.open(settings_of(db), None, create=True):
            pass
    assert await Campaigns(db).list() == []

    await Campaigns(db).ensure("salt-road")
    async with CampaignDesk.open(settings_of(db), None, create=True) as desk:
        assert desk.campaign_id == "salt-road"

    await Campaigns(db).ensure("ashfall")
    with pytest.raises(InvalidInputError, match=r"holds 2 campaigns \(ashfall, salt-road\)"):
        async with CampaignDesk.open(settings_of(db), None):
            pass
    assert [c.id for c in await Campaigns(db).list()] == ["ashfall", "salt-road"]


async def test_the_embedder_settings_are_read_only_when_an_action_embeds(
    memory: CampaignMemory,
) -> None:
    asked: list[str] = []

    def settings() -> EmbeddingSettings:
        asked.append("embedding")
        return EmbeddingSettings(provider="local")

    desk = CampaignDesk(memory, Embedding(settings=settings))
    new = build(NewEntity, name="Mara", type=EntityType.NPC)
    mara = await add_entity(desk, new)
    await edit_entity(desk, mara, new.model_copy(update={"id": mara.id, "aliases": ("M",)}))
    assert asked == []  # nothing was embedded: no rename
    await edit_entity(desk, mara, new.model_copy(update={"id": mara.id, "name": "Mara Vell"}))
    # Renamed: her relationships read differently, so the embedder is made (and here, with
    # 4-dimensional test vectors, found unable to make them: the edit stands all the same).
    assert asked == ["embedding"]
    assert (await memory.graph.get_entity(mara.id)).name == "Mara Vell"


async def test_an_action_that_needs_an_embedder_says_none_was_configured(
    memory: CampaignMemory,
) -> None:
    with pytest.raises(ConfigurationError, match="no embedder was configured"):
        CampaignDesk(memory).embedder()
    assert await CampaignDesk(memory).write_embedder() is None


async def test_an_npc_not_in_the_campaign_is_named_with_near_misses(
    memory: CampaignMemory,
) -> None:
    desk = CampaignDesk(memory)
    await add_entity(desk, build(NewEntity, name="Brannoch", type=EntityType.NPC))
    await check_npc(desk, "brannoch")
    with pytest.raises(NotFoundError, match=r"No entity 'brannok' .* Did you mean brannoch"):
        await check_npc(desk, "brannok")
