-- Storing a fact's or relationship's vector (on write, or by backfill-embeddings) changes
-- nothing an NPC knows: it must not move the knowledge counter (sql/015), which would make
-- every viewer rebuild what it derives from the graph, nor tell subscribers their hot context
-- changed (sql/002). Updates of these two tables count only the rows in which something
-- other than the vector changed.

CREATE FUNCTION glyphoxa_graph_rows_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed_campaign text;
BEGIN
    FOR changed_campaign IN
        SELECT DISTINCT n.campaign_id
        FROM new_rows n JOIN old_rows o ON o.campaign_id = n.campaign_id AND o.id = n.id
        WHERE to_jsonb(n) - 'embedding' IS DISTINCT FROM to_jsonb(o) - 'embedding'
    LOOP
        INSERT INTO knowledge_versions AS v (campaign_id, version)
        VALUES (changed_campaign, 1)
        ON CONFLICT (campaign_id) DO UPDATE SET version = v.version + 1;
        PERFORM pg_notify(
            'glyphoxa_changes',
            json_build_object(
                'campaign', changed_campaign, 'kind', 'graph', 'table', TG_TABLE_NAME
            )::text
        );
    END LOOP;
    RETURN NULL;
END
$$;

DROP TRIGGER facts_knowledge_update ON facts;
DROP TRIGGER facts_notify_update ON facts;
DROP TRIGGER relationships_knowledge_update ON relationships;
DROP TRIGGER relationships_notify_update ON relationships;

CREATE TRIGGER facts_graph_update AFTER UPDATE ON facts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_graph_rows_updated();
CREATE TRIGGER relationships_graph_update AFTER UPDATE ON relationships
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_graph_rows_updated();
