-- A counter per campaign that moves whenever the campaign's entities change (insert, update,
-- delete, from any connection), so a server can keep what it derives from them (who may know
-- which names; the names to match and redact) and check it is current with one key lookup.
-- No foreign key: a campaign's delete cascades to its entities, whose trigger lands here
-- after the campaign row is gone.
CREATE TABLE entity_versions (
    campaign_id  text PRIMARY KEY,
    version      bigint NOT NULL
);

CREATE FUNCTION glyphoxa_bump_entity_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO entity_versions AS v (campaign_id, version)
    SELECT DISTINCT campaign_id, 1 FROM changed_rows
    ON CONFLICT (campaign_id) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER entities_version_insert AFTER INSERT ON entities
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_entity_version();
CREATE TRIGGER entities_version_update AFTER UPDATE ON entities
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_entity_version();
CREATE TRIGGER entities_version_delete AFTER DELETE ON entities
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_entity_version();
