-- An NPC whose every line of a session is removed no longer spoke in it.
--
-- The NPCs who spoke in a session hear its lines outside any scene (session_npcs, sql/032),
-- and the table only grew: a line wrongly given to an NPC and then forgotten left that NPC
-- hearing the session (its searches found the session's passages while its summary said
-- nothing reached it). Removing lines now drops the speakers left with none in their
-- session, and the session is heard again. A session or campaign deleted takes its rows
-- with it (the foreign key), so only sessions still there are heard.
CREATE FUNCTION glyphoxa_lines_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    left_session record;
BEGIN
    FOR left_session IN
        WITH silent AS (
            DELETE FROM session_npcs n
            USING (SELECT DISTINCT r.campaign_id, r.session_id,
                          glyphoxa_line_npc(r.campaign_id, r.npc_id, r.speaker_id) AS npc_id
                   FROM removed_rows r) gone
            WHERE n.campaign_id = gone.campaign_id AND n.session_id = gone.session_id
              AND n.npc_id = gone.npc_id
              AND NOT EXISTS (
                  SELECT FROM session_entries e
                  WHERE e.campaign_id = n.campaign_id AND e.session_id = n.session_id
                    AND glyphoxa_line_npc(e.campaign_id, e.npc_id, e.speaker_id) = n.npc_id)
            RETURNING n.campaign_id, n.session_id
        )
        SELECT DISTINCT s.campaign_id, s.session_id FROM silent s
        WHERE glyphoxa_witnessed(s.campaign_id) ORDER BY 1, 2
    LOOP
        PERFORM glyphoxa_hear_session(left_session.campaign_id, left_session.session_id);
    END LOOP;
    RETURN NULL;
END $$;

CREATE TRIGGER session_entries_speakers_gone AFTER DELETE ON session_entries
    REFERENCING OLD TABLE AS removed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_lines_removed();
