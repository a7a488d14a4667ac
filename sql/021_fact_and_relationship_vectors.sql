-- Facts and relationships are embedded after they are written (by each write path, and by
-- `glyphoxa-mcp backfill-embeddings` for those written while the embedder was down or
-- before they were embedded at all), so that search_facts finds them by meaning.
-- These partial indexes find the rows still waiting for a vector without reading the rest.
CREATE INDEX facts_awaiting_vector ON facts (campaign_id, id)
    WHERE embedding IS NULL AND superseded_by IS NULL;

-- A relationship's vector is that of its sentence ("Brannoch is employed by Town Watch."),
-- made from its ends' names.
ALTER TABLE relationships ADD COLUMN embedding vector({{EMBEDDING_DIM}});
CREATE INDEX relationships_embedding ON relationships USING hnsw (embedding vector_cosine_ops);
CREATE INDEX relationships_awaiting_vector ON relationships (campaign_id, id)
    WHERE embedding IS NULL;

-- A renamed entity's relationships read differently: their vectors are made again.
CREATE FUNCTION glyphoxa_forget_relationship_vectors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE relationships SET embedding = NULL
    WHERE campaign_id = NEW.campaign_id AND (source_id = NEW.id OR target_id = NEW.id)
      AND embedding IS NOT NULL;
    RETURN NULL;
END
$$;

CREATE TRIGGER entities_renamed AFTER UPDATE OF name ON entities
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
    EXECUTE FUNCTION glyphoxa_forget_relationship_vectors();
