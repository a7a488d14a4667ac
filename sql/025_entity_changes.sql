-- Which entities changed at which version of a campaign's entities (sql/007), so a server
-- that derived something at version v (who may know which entities, the names to match and
-- to redact) reads only the entities changed since v and patches it, instead of reading all
-- of them again: at 10,000 entities a full re-read and rebuild takes longer than a tool
-- call may (issue 17).
-- One row per entity and version; the version is the one the same statement moved the
-- counter to. An update logs the old id too, so an entity whose id changed is seen to be
-- gone. The campaign leads the key (tests/db/test_distribution.py); no foreign key, as for
-- entity_versions: a campaign's delete cascades to its entities, whose trigger lands here.
CREATE TABLE entity_changes (
    campaign_id  text NOT NULL,
    version      bigint NOT NULL,
    entity_id    text NOT NULL,
    PRIMARY KEY (campaign_id, version, entity_id)
);

-- The counter's function now also logs the changed ids at the new version, and prunes the
-- versions more than 100,000 behind it: a reader that far behind finds the log incomplete
-- (GraphQueries.entity_changes) and reads everything again. Pruning as it goes (one
-- version per statement, through the key) keeps the log bounded at a constant cost.
CREATE OR REPLACE FUNCTION glyphoxa_bump_entity_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- An update's old ids as well; only an update's trigger has old rows to read.
    EXECUTE format($changes$
        WITH changed AS (
            SELECT DISTINCT campaign_id, id FROM changed_rows %s
        ), bumped AS (
            INSERT INTO entity_versions AS v (campaign_id, version)
            SELECT DISTINCT campaign_id, 1 FROM changed
            ON CONFLICT (campaign_id) DO UPDATE SET version = v.version + 1
            RETURNING v.campaign_id, v.version
        ), logged AS (
            INSERT INTO entity_changes (campaign_id, version, entity_id)
            SELECT c.campaign_id, b.version, c.id FROM changed c JOIN bumped b USING (campaign_id)
        )
        DELETE FROM entity_changes pruned USING bumped b
        WHERE pruned.campaign_id = b.campaign_id AND pruned.version <= b.version - 100000
    $changes$,
    CASE WHEN TG_OP = 'UPDATE' THEN 'UNION SELECT campaign_id, id FROM old_rows' ELSE '' END);
    RETURN NULL;
END
$$;

-- The update trigger sees the old rows as well, for the ids an update replaced.
DROP TRIGGER entities_version_update ON entities;
CREATE TRIGGER entities_version_update AFTER UPDATE ON entities
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_entity_version();
