"""Embedding facts, so `search_facts` finds them by meaning as well as by words.

Every path that writes facts (a campaign load, `fact add`, `fact retcon`, extraction after
a session or during play) stores them first and then calls `embed_new_facts`: the write
never waits on, nor fails with, the embedder. What an unavailable embedder leaves without a
vector is found by the next write path's call or by `embed_missing_facts`, the backfill
behind `glyphoxa-mcp backfill-embeddings`: resumable, as each batch is committed on its
own, and idempotent, as only facts without a vector are read.
"""

from __future__ import annotations

import logging

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.embedding_model import check_embedding_model
from glyphoxa_mcp.errors import ConfigurationError
from glyphoxa_mcp.providers.embeddings import Embedder, EmbeddingSettings, make_embedder
from glyphoxa_mcp.providers.openai_errors import ProviderError
from glyphoxa_mcp.storage.fact_vectors import FactVectors

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


async def embed_missing_facts(
    db: Database, embedder: Embedder, campaign_id: str | None = None, *, batch: int = BATCH
) -> int:
    """Embed every current fact without a vector (in one campaign, or all with None), a
    batch at a time, each batch committed; how many were embedded. An embedder failure
    raises, leaving the batches before it stored."""
    vectors = FactVectors(db, campaign_id)
    embedded, after_id = 0, 0
    while facts := await vectors.missing(after_id=after_id, limit=batch):
        made = await embedder.embed([fact.text for fact in facts])
        await vectors.store(list(zip(facts, made, strict=True)))
        embedded += len(facts)
        after_id = facts[-1].id
    return embedded


async def embed_new_facts(db: Database, embedder: Embedder | None, campaign_id: str) -> int:
    """After a write: embed the campaign's facts that have no vector yet; how many. An
    embedder that is missing or fails is logged and leaves them for the backfill (the facts
    themselves are stored already and found by their words meanwhile)."""
    if embedder is None:
        return 0
    try:
        return await embed_missing_facts(db, embedder, campaign_id)
    except (ProviderError, ConfigurationError) as exc:
        log.warning(
            "facts of campaign %r were stored without a vector (%s); they are found by their "
            "words until `glyphoxa-mcp backfill-embeddings` or the next write embeds them",
            campaign_id,
            exc,
        )
        return 0
