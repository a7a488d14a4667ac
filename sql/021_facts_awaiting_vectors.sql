-- Facts are embedded after they are written (by each write path, and by
-- `glyphoxa-mcp backfill-embeddings` for those written while the embedder was down or
-- before facts were embedded at all). This finds the current facts still waiting for a
-- vector without reading the rest.
CREATE INDEX facts_awaiting_vector ON facts (campaign_id, id)
    WHERE embedding IS NULL AND superseded_by IS NULL;
