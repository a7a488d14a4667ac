"""Taking a campaign along: its archive written (`campaign export`, the desk's download) and
restored (`campaign import`), storage/archive.py; docs/reference/campaign-archive.md."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.providers.embeddings import Embedder, EmbeddingSettings, make_embedder
from glyphoxa_mcp.storage import archive
from glyphoxa_mcp.storage.archive import ArchiveSummary


def export_campaign(db: Database, campaign_id: str) -> AsyncGenerator[bytes, None]:
    """The campaign's archive, gzip'd, a piece at a time (read on one snapshot)."""
    return archive.archive_bytes(archive.archive_lines(db, campaign_id))


def archive_file_name(campaign_id: str) -> str:
    """The name an archive is offered under."""
    return f"{campaign_id}{archive.ARCHIVE_SUFFIX}"


async def import_campaign(
    db: Database,
    path: str,
    *,
    as_id: str | None = None,
    embedding: EmbeddingSettings | None = None,
) -> ArchiveSummary:
    """Restore the archive at `path` as a new campaign (its own id, or `as_id`), in one
    transaction. When its vectors are another model's than this database's, the configured
    embedder (`embedding`) makes them again: the passages' and lore's in the transaction,
    the facts' and relationships' right after it, as `backfill-embeddings` would."""
    configured = _Configured(db, embedding) if embedding is not None else None
    imported = await archive.import_archive(
        db, archive.read_archive(path), source=path, as_id=as_id, embedder=configured
    )
    if imported.vectors_made_again and configured is not None:
        await embed_new(db, configured(), imported.campaign_id)
    return imported


class _Configured:
    """The configured embedder, made (its model loaded) when first asked for."""

    def __init__(self, db: Database, settings: EmbeddingSettings) -> None:
        self.db, self.settings = db, settings
        self._made: Embedder | None = None

    def __call__(self) -> Embedder:
        if self._made is None:
            self._made = make_embedder(self.settings, self.db.embedding_dim)
        return self._made
