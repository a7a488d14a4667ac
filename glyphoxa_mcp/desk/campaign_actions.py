"""Whole campaigns: loading a campaign file, importing entities from a virtual tabletop, the
campaign's settings, what-if branches (fork, lineage), and deleting a campaign."""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_mcp.campaign import importer, loader
from glyphoxa_mcp.campaign.file_format import CampaignFile
from glyphoxa_mcp.campaign.vtt.common import ImportResult
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.listings import Branch
from glyphoxa_mcp.domain.models import Campaign
from glyphoxa_mcp.domain.reports import (
    BranchPolicy,
    CampaignDeleted,
    CampaignSize,
    Fork,
    ImportReport,
    LoadReport,
)
from glyphoxa_mcp.domain.review_items import PendingSource
from glyphoxa_mcp.pipeline.fact_embedding import write_embedder
from glyphoxa_mcp.providers.embeddings import EmbeddingSettings
from glyphoxa_mcp.storage import deletion, forking
from glyphoxa_mcp.storage.branches import branch_tree
from glyphoxa_mcp.storage.campaigns import Campaigns


async def load_campaign_file(
    db: Database,
    file: CampaignFile,
    campaign_id: str | None,
    *,
    dry_run: bool = False,
    embedding: EmbeddingSettings | None = None,
) -> LoadReport:
    """Load the file into the campaign it names (or `campaign_id`), all or nothing; with
    `dry_run`, what would change, nothing written. The facts are embedded with `embedding`
    once stored (not on a dry run)."""
    embedder = None if dry_run or embedding is None else await write_embedder(db, embedding)
    return await loader.load_campaign(db, file, campaign_id, dry_run=dry_run, embedder=embedder)


async def import_entities(
    db: Database, campaign_id: str, source: PendingSource, result: ImportResult, *, accept: bool
) -> ImportReport:
    """Entities from a VTT export: with `accept`, written now; otherwise held for review."""
    return await importer.import_entities(db, campaign_id, source, result, accept=accept)


async def campaign_settings(desk: CampaignDesk) -> Campaign:
    return await desk.memory.campaign()


async def set_review_threshold(desk: CampaignDesk, threshold: float) -> Campaign:
    """Below `threshold`, unconfirmed knowledge is a rumour the DM reviews."""
    return await Campaigns(desk.db).set_review_threshold(desk.campaign_id, threshold)


async def configure_knowledge(
    desk: CampaignDesk,
    *,
    knowledge: Knowledge | None = None,
    news_hops: int | None = None,
    news_types: Sequence[str] | None = None,
) -> Campaign:
    """Who knows what: whether an NPC reads only the scenes it witnessed, and how far word of
    a scene travels (domain/knowledge.py). Applied at once, running servers included."""
    return await Campaigns(desk.db).configure_knowledge(
        desk.campaign_id, knowledge=knowledge, news_hops=news_hops, news_types=news_types
    )


async def list_campaigns(db: Database) -> list[Campaign]:
    return await Campaigns(db).list()


async def fork_campaign(
    db: Database,
    campaign_id: str,
    new_id: str,
    *,
    at_session: str | None = None,
    name: str | None = None,
) -> Fork:
    """A what-if branch: the campaign's memory (or as it stood after `at_session`) copied
    into a new campaign, in one transaction."""
    return await forking.fork_campaign(db, campaign_id, new_id, at_session=at_session, name=name)


async def campaign_lineage(db: Database, campaign_id: str) -> Branch:
    """The tree of branches the campaign belongs to, from its oldest ancestor down."""
    return await branch_tree(db, campaign_id)


async def campaign_size(db: Database, campaign_id: str) -> CampaignSize:
    """What deleting the campaign would delete."""
    return await deletion.campaign_size(db, campaign_id)


async def delete_campaign(
    db: Database, campaign_id: str, branches: BranchPolicy = "refuse"
) -> CampaignDeleted:
    """The campaign and everything stored for it; its branches refused, deleted or kept."""
    return await deletion.delete_campaign(db, campaign_id, branches)
