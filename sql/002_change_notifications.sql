-- Tell listening servers what changed, so subscribers to an NPC's hot context hear about a
-- new transcript line or a graph change, even one written by another process.
-- Statement-level, so a bulk load notifies once per campaign (and session), not per row;
-- PostgreSQL also folds identical notifications within a transaction.

CREATE FUNCTION glyphoxa_notify_transcript() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'glyphoxa_changes',
        json_build_object('campaign', campaign_id, 'kind', 'transcript', 'session', session_id)::text
    )
    FROM (SELECT DISTINCT campaign_id, session_id FROM changed_rows) AS changed;
    RETURN NULL;
END
$$;

CREATE FUNCTION glyphoxa_notify_graph() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'glyphoxa_changes',
        json_build_object('campaign', campaign_id, 'kind', 'graph', 'table', TG_TABLE_NAME)::text
    )
    FROM (SELECT DISTINCT campaign_id FROM changed_rows) AS changed;
    RETURN NULL;
END
$$;

CREATE TRIGGER session_entries_notify AFTER INSERT ON session_entries
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_transcript();

-- A trigger with transition tables takes one event, hence three per graph table.
CREATE TRIGGER entities_notify_insert AFTER INSERT ON entities
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER entities_notify_update AFTER UPDATE ON entities
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER entities_notify_delete AFTER DELETE ON entities
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_notify_graph();

CREATE TRIGGER relationships_notify_insert AFTER INSERT ON relationships
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER relationships_notify_update AFTER UPDATE ON relationships
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER relationships_notify_delete AFTER DELETE ON relationships
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_notify_graph();

CREATE TRIGGER facts_notify_insert AFTER INSERT ON facts
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER facts_notify_update AFTER UPDATE ON facts
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER facts_notify_delete AFTER DELETE ON facts
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_notify_graph();
