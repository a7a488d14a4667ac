"""Embedding facts and relationships (as sentences), so `search_facts` finds them by
meaning as well as by words.

Every path that writes them (a campaign load, `fact add`, `fact retcon`, `relate`, an
entity's rename, extraction after a session or during play) stores them first and then
calls `embed_new`: the write never waits on, nor fails with, the embedder. What an
unavailable embedder leaves without a vector is found by the next write path's call or by
`embed_missing`, the backfill behind `glyphoxa-mcp backfill-embeddings`: resumable, as each
batch is committed on its own, and idempotent, as only rows without a vector are read.
"""

from __future__ import annotations

import logging

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.embedding_model import check_embedding_model
from glyphoxa_mcp.domain.reports import Embedded
from glyphoxa_mcp.errors import ConfigurationError, ProviderError
from glyphoxa_mcp.providers.embeddings import Embedder, EmbeddingSettings, make_embedder
from glyphoxa_mcp.recall.relationship_sentences import relationship_sentence
from glyphoxa_mcp.storage.fact_vectors import (
    FactVectors,
    RelationshipVectors,
    UnembeddedRelationship,
)

log = logging.getLogger(__name__)

# Texts per embedder call and per committed transaction.
BATCH = 64


async def write_embedder(db: Database, settings: EmbeddingSettings) -> Embedder | None:
    """The configured embedder, for a command that writes facts; None (logged) when it cannot
    make this database's vectors, so that the write goes ahead and the facts wait."""
    try:
        embedder = make_embedder(settings, db.embedding_dim)
        await check_embedding_model(db, embedder.model)
    except ConfigurationError as exc:
        log.warning("the facts written now are not embedded: %s", exc)
        return None
    return embedder


async def embed_missing(
    db: Database, embedder: Embedder, campaign_id: str | None = None, *, batch: int = BATCH
) -> Embedded:
    """Embed every current fact and every relationship without a vector (in one campaign,
    or all with None), a batch at a time, each batch committed. An embedder failure raises,
    leaving the batches before it stored."""
    facts = FactVectors(db, campaign_id)
    fact_count, after_id = 0, 0
    while waiting := await facts.missing(after_id=after_id, limit=batch):
        made = await embedder.embed([fact.text for fact in waiting])
        await facts.store(list(zip(waiting, made, strict=True)))
        fact_count += len(waiting)
        after_id = waiting[-1].id
    relationships = RelationshipVectors(db, campaign_id)
    relationship_count, after_id = 0, 0
    while links := await relationships.missing(after_id=after_id, limit=batch):
        made = await embedder.embed([sentence(link) for link in links])
        await relationships.store(list(zip(links, made, strict=True)))
        relationship_count += len(links)
        after_id = links[-1].id
    return Embedded(fact_count, relationship_count)


def sentence(link: UnembeddedRelationship) -> str:
    """What a relationship's vector is made from: the sentence search_facts shows for it."""
    return relationship_sentence(link.source_name, link.rel_type, link.target_name)


async def embed_new(db: Database, embedder: Embedder | None, campaign_id: str) -> Embedded:
    """After a write: embed the campaign's facts and relationships that have no vector yet.
    An embedder that is missing or fails is logged and leaves them for the backfill (they
    are stored already, and found by their words meanwhile)."""
    if embedder is None:
        return Embedded()
    try:
        return await embed_missing(db, embedder, campaign_id)
    except (ProviderError, ConfigurationError) as exc:
        log.warning(
            "facts or relationships of campaign %r were stored without a vector (%s); they are "
            "found by their words until `glyphoxa-mcp backfill-embeddings` or the next write "
            "embeds them",
            campaign_id,
            exc,
        )
        return Embedded()
