-- What-if branches and deleting (issue 19): storage/branches.py, storage/deletion.py.

-- A branch is a campaign copied from another one, everything or as it stood after one of its
-- sessions (`campaign fork`). It records where it came from; deleting the parent either
-- takes the branches along or detaches them (the link to a deleted campaign goes with it).
-- No foreign key: one between two campaigns could not be checked on one shard
-- (tests/db/test_distribution.py); storage/deletion.py keeps the links.
ALTER TABLE campaigns
    ADD COLUMN forked_from text,
    ADD COLUMN forked_at_session text,
    ADD COLUMN forked_at timestamptz,
    ADD CONSTRAINT a_campaign_is_not_its_own_branch CHECK (forked_from <> id),
    ADD CONSTRAINT a_fork_point_belongs_to_a_parent
        CHECK (forked_at_session IS NULL OR forked_from IS NOT NULL);

-- A session whose lines were forgotten after its summary was written: the summary was made
-- again from the lines left (or, the DM's own, kept) and waits for the DM to look at it.
-- Writing the summary again (`session end`, the DM) is that review: the flag clears.
ALTER TABLE sessions ADD COLUMN summary_needs_review boolean NOT NULL DEFAULT false;

CREATE FUNCTION glyphoxa_summary_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.summary_needs_review := false;
    RETURN NEW;
END
$$;

CREATE TRIGGER sessions_summary_rewritten BEFORE UPDATE OF summary ON sessions
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_summary_rewritten();

-- A line removed (forgotten, or with its session or campaign) reaches hot-context
-- subscribers like a new one (sql/002): the last minutes they were shown may have held it.
CREATE TRIGGER session_entries_notify_delete AFTER DELETE ON session_entries
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_transcript();

-- A deleted campaign's id may be used again (a branch deleted and forked anew). Servers keep
-- what they derived from a campaign tagged with its counters (sql/007, sql/015, sql/025) and
-- take a counter they saw before for the same data; so a new campaign's counters start past
-- any value an earlier campaign of the same id can have reached: each campaign row starts
-- them at its own generation times 2^32.
CREATE SEQUENCE glyphoxa_campaign_generations;

CREATE FUNCTION glyphoxa_start_campaign_versions() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    first_version bigint := nextval('glyphoxa_campaign_generations') << 32;
BEGIN
    INSERT INTO entity_versions (campaign_id, version) VALUES (NEW.id, first_version)
    ON CONFLICT (campaign_id) DO NOTHING;
    INSERT INTO knowledge_versions (campaign_id, version) VALUES (NEW.id, first_version)
    ON CONFLICT (campaign_id) DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER campaigns_versions_start AFTER INSERT ON campaigns
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_start_campaign_versions();

-- However a campaign is deleted, its branches stay and are detached from it: no campaign
-- names a deleted one as its parent (nor a new campaign that reuses the id).
CREATE FUNCTION glyphoxa_detach_branches() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE campaigns c SET forked_from = NULL, forked_at_session = NULL
    FROM deleted_rows d WHERE c.forked_from = d.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER campaigns_branches_detached AFTER DELETE ON campaigns
    REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_detach_branches();
