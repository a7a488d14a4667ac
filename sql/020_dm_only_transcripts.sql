-- What the DM keeps to themselves of the transcripts (`glyphoxa-mcp secret mark line:ID`,
-- `session:ID`): a line that states a secret without naming anything hidden ("Tarquel paid
-- the smugglers…"), or a whole session (the DM's preparation notes). Only the DM reads them.
ALTER TABLE sessions ADD COLUMN dm_only boolean NOT NULL DEFAULT false;
ALTER TABLE session_entries ADD COLUMN dm_only boolean NOT NULL DEFAULT false;

-- A passage holding a DM-only line, or cut from a DM-only session, is DM-only as a whole:
-- its embedding and its words carry the line, so it may neither be shown nor rank.
ALTER TABLE chunks ADD COLUMN dm_only boolean NOT NULL DEFAULT false;

CREATE FUNCTION glyphoxa_chunk_dm_only(campaign text, session text, entry_ids bigint[])
RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
               SELECT FROM sessions s
               WHERE s.campaign_id = campaign AND s.id = session AND s.dm_only)
        OR EXISTS (
               SELECT FROM session_entries e
               WHERE e.id = ANY(entry_ids) AND e.campaign_id = campaign AND e.dm_only)
$$;

CREATE FUNCTION glyphoxa_set_chunk_dm_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.dm_only := glyphoxa_chunk_dm_only(NEW.campaign_id, NEW.session_id, NEW.entry_ids);
    RETURN NEW;
END
$$;

CREATE TRIGGER chunks_dm_only BEFORE INSERT OR UPDATE OF session_id, entry_ids ON chunks
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_set_chunk_dm_only();
