"""Adding lore documents: embed the sections of those that are new or changed, then store
them all in one transaction. The vectors are made first, so an embedder that fails leaves
the library as it was."""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.embedding_model import check_embedding_model
from glyphoxa_mcp.domain.lore_models import AddedDocument
from glyphoxa_mcp.domain.models import Visibility
from glyphoxa_mcp.lore.documents import ParsedDocument, check_distinct_ids
from glyphoxa_mcp.lore.sections import embedding_text
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.storage.lore_library import (
    LoreLibrary,
    NewLoreDocument,
    NewLoreSection,
)

# Texts per embedder call.
BATCH = 64


async def add_lore(
    db: Database,
    campaign_id: str,
    documents: Sequence[ParsedDocument],
    visibility: Visibility,
    embedder: Embedder,
) -> list[AddedDocument]:
    """Add the documents with this visibility (adding one again updates it in place)."""
    check_distinct_ids(documents)
    library = LoreLibrary(db, campaign_id)
    stored = await library.stored([d.id for d in documents])
    changed = [d for d in documents if d.id not in stored or stored[d.id].checksum != d.checksum]
    if changed:
        await check_embedding_model(db, embedder.model)
    sections = await _embedded(embedder, changed)
    return await library.add(
        [
            NewLoreDocument(
                id=d.id,
                title=d.title,
                source_kind=d.source_kind,
                source_name=d.source_name,
                checksum=d.checksum,
                visibility=visibility,
                sections=sections.get(d.id),
            )
            for d in documents
        ]
    )


async def _embedded(
    embedder: Embedder, documents: Sequence[ParsedDocument]
) -> dict[str, tuple[NewLoreSection, ...]]:
    """The documents' sections with their vectors, by document id."""
    texts = [embedding_text(d.title, s) for d in documents for s in d.sections]
    vectors: list[list[float]] = []
    for start in range(0, len(texts), BATCH):
        vectors += await embedder.embed(texts[start : start + BATCH])
    made = iter(vectors)
    return {
        d.id: tuple(
            NewLoreSection(heading=s.heading, text=s.text, embedding=next(made)) for s in d.sections
        )
        for d in documents
    }
