-- A counter per campaign that moves whenever anything an NPC knows changes: its entities,
-- relationships or facts, from any connection. What is derived from all three (an NPC's
-- identity in its hot context) is kept while the counter stands still and checked with one
-- key lookup. Entities keep their own counter (sql/007): what depends on them alone
-- survives a new fact.
-- No foreign key, as for entity_versions: a campaign's delete cascades to these tables,
-- whose triggers land here after the campaign row is gone.
CREATE TABLE knowledge_versions (
    campaign_id  text PRIMARY KEY,
    version      bigint NOT NULL
);

CREATE FUNCTION glyphoxa_bump_knowledge_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO knowledge_versions AS v (campaign_id, version)
    SELECT DISTINCT campaign_id, 1 FROM changed_rows
    ON CONFLICT (campaign_id) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER entities_knowledge_insert AFTER INSERT ON entities
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER entities_knowledge_update AFTER UPDATE ON entities
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER entities_knowledge_delete AFTER DELETE ON entities
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();

CREATE TRIGGER relationships_knowledge_insert AFTER INSERT ON relationships
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER relationships_knowledge_update AFTER UPDATE ON relationships
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER relationships_knowledge_delete AFTER DELETE ON relationships
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();

CREATE TRIGGER facts_knowledge_insert AFTER INSERT ON facts
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER facts_knowledge_update AFTER UPDATE ON facts
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER facts_knowledge_delete AFTER DELETE ON facts
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
