-- Which sessions an NPC may read is part of what it knows: a session added or deleted, or
-- given to or taken from the DM alone, moves the campaign's knowledge counter (sql/015), as
-- a changed entity, relationship or fact does. A server then keeps what it derives from the
-- sessions (the sessions each viewer may not read) while the counter stands still, checked
-- with the one key lookup a call makes already, instead of reading every session per call.
-- Sessions are added a few times in a campaign's life, so the caches this clears are
-- rebuilt rarely.
CREATE TRIGGER sessions_knowledge_insert AFTER INSERT ON sessions
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER sessions_knowledge_delete AFTER DELETE ON sessions
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();

-- A session's other columns (its summary rewritten, its end) change no one's reach.
CREATE FUNCTION glyphoxa_sessions_reach_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO knowledge_versions AS v (campaign_id, version)
    SELECT DISTINCT n.campaign_id, 1
    FROM new_rows n JOIN old_rows o ON o.campaign_id = n.campaign_id AND o.id = n.id
    WHERE n.dm_only IS DISTINCT FROM o.dm_only
    ON CONFLICT (campaign_id) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER sessions_knowledge_update AFTER UPDATE ON sessions
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_sessions_reach_changed();
