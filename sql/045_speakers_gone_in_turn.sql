-- Speakers left with no line (sql/042), worked out in their session's turn and only for
-- sessions still there.
--
-- sql/042 read which speakers had no line left before taking the session's hearing turn
-- (glyphoxa_hearing_turn), so a line of the same NPC added meanwhile could be missed; and a
-- session being deleted (its lines go with it) was heard again, every passage's hearers
-- rewritten just before they were deleted too.
CREATE OR REPLACE FUNCTION glyphoxa_lines_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    touched record;
    silenced integer;
BEGIN
    FOR touched IN
        SELECT DISTINCT r.campaign_id, r.session_id FROM removed_rows r
        WHERE EXISTS (SELECT FROM sessions s
                      WHERE s.campaign_id = r.campaign_id AND s.id = r.session_id)
        ORDER BY 1, 2
    LOOP
        PERFORM glyphoxa_hearing_turn(touched.campaign_id, touched.session_id);
        DELETE FROM session_npcs n
        WHERE n.campaign_id = touched.campaign_id AND n.session_id = touched.session_id
          AND n.npc_id IN (
              SELECT glyphoxa_line_npc(r.campaign_id, r.npc_id, r.speaker_id) FROM removed_rows r
              WHERE r.campaign_id = touched.campaign_id AND r.session_id = touched.session_id)
          AND NOT EXISTS (
              SELECT FROM session_entries e
              WHERE e.campaign_id = n.campaign_id AND e.session_id = n.session_id
                AND glyphoxa_line_npc(e.campaign_id, e.npc_id, e.speaker_id) = n.npc_id);
        GET DIAGNOSTICS silenced = ROW_COUNT;
        IF silenced > 0 AND glyphoxa_witnessed(touched.campaign_id) THEN
            PERFORM glyphoxa_hear_session(touched.campaign_id, touched.session_id);
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
