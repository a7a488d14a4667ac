-- The lines whose hearers the DM chose: few, and what a summary asks of a session for each
-- NPC (a scene it was at whose line it did not hear is not wholly witnessed), so read
-- without a pass over the session's lines.
CREATE INDEX session_entries_hearers_chosen ON session_entries (campaign_id, session_id)
    WHERE heard_by_dm IS NOT NULL;
