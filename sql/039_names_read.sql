-- What the campaign's name correction reads in a text: the entities whose names it would put
-- back, misspelt or in look-alike letters (recall/names_read.py). Redaction asks it of every
-- line and fact an NPC is shown, and working it out takes 0.3-1.3 ms a text; a server that
-- has not read a text since it started works it out again, which was a fifth of the serving
-- process's time under load. Kept here, any process finds it once it has been worked out.
--
-- A row's key is a digest of the names and the code that read it and of the text itself,
-- so a row is right for as long as it can be found: another text, or the same text once a
-- name has changed, has another key. Rows of names the campaign no longer has are never
-- found again; they are dropped when a session ends. Deleting a line, a fact or a session
-- empties the campaign's rows (what was read in a deleted text goes with it).
CREATE TABLE names_read (
    campaign_id  text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    reading      bytea NOT NULL CHECK (length(reading) = 16),
    -- The digest of the names and code alone: which names a row was read under.
    names_digest bytea NOT NULL CHECK (length(names_digest) = 16),
    entity_ids   text[] NOT NULL,
    PRIMARY KEY (campaign_id, reading)
);
CREATE INDEX names_read_by_names ON names_read (campaign_id, names_digest);
