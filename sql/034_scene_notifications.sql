-- A change of who was present reaches running servers (issue 30): a transcript notification
-- naming the NPCs whose hot context changed, so only their subscribers hear of it.
--   * Lines heard by other NPCs (a scene's presence changed, a scene added or removed, the
--     DM chose a line's hearers): the NPCs who began or stopped hearing one of them. When a
--     line was heard by everyone before or after (a shared campaign), every NPC.
--   * A scene changed: the NPCs present in it before and after (where they are and who is
--     with them come from the scene being played).
-- 'removed' says an NPC may have stopped hearing a line, so a server drops the hot contexts it keeps
-- for an outage, which may quote it (sql/030). 'npcs' is left out (everyone) when listing
-- them would not fit in a notification.

CREATE FUNCTION glyphoxa_notify_hearers(
    campaign text, session text, gained text[], lost text[], everyone boolean
) RETURNS void LANGUAGE sql AS $$
    SELECT pg_notify(
        'glyphoxa_changes',
        json_strip_nulls(json_build_object(
            'campaign', campaign, 'kind', 'transcript', 'session', session,
            'removed', everyone OR cardinality(lost) > 0,
            'npcs', CASE WHEN NOT everyone AND cardinality(gained || lost) <= 200
                         THEN glyphoxa_sorted_set(gained || lost) END
        ))::text
    )
$$;

CREATE FUNCTION glyphoxa_notify_heard_by() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM glyphoxa_notify_hearers(c.campaign_id, c.session_id, c.gained, c.lost, c.everyone)
    FROM (
        SELECT n.campaign_id, n.session_id,
               glyphoxa_sorted_set(array_agg(g)) AS gained,
               glyphoxa_sorted_set(array_agg(l)) AS lost,
               bool_or(o.heard_by IS NULL OR n.heard_by IS NULL) AS everyone
        FROM old_rows o
        JOIN new_rows n ON n.id = o.id
        LEFT JOIN LATERAL (SELECT unnest(n.heard_by) EXCEPT SELECT unnest(o.heard_by)) gain(g)
               ON true
        LEFT JOIN LATERAL (SELECT unnest(o.heard_by) EXCEPT SELECT unnest(n.heard_by)) loss(l)
               ON true
        WHERE o.heard_by IS DISTINCT FROM n.heard_by
        GROUP BY n.campaign_id, n.session_id
    ) c;
    RETURN NULL;
END $$;

CREATE TRIGGER session_entries_notify_heard_by AFTER UPDATE ON session_entries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_heard_by();

CREATE FUNCTION glyphoxa_notify_scenes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM glyphoxa_notify_hearers(c.campaign_id, c.session_id, c.present, '{}', false)
    FROM (
        SELECT s.campaign_id, s.session_id, glyphoxa_sorted_set(array_agg(p)) AS present
        FROM changed_scenes s LEFT JOIN LATERAL unnest(s.present) p ON true
        GROUP BY s.campaign_id, s.session_id
    ) c;
    RETURN NULL;
END $$;

CREATE FUNCTION glyphoxa_notify_scenes_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM glyphoxa_notify_hearers(c.campaign_id, c.session_id, c.present, '{}', false)
    FROM (
        SELECT s.campaign_id, s.session_id, glyphoxa_sorted_set(array_agg(p)) AS present
        FROM (SELECT * FROM old_scenes UNION ALL SELECT * FROM new_scenes) s
        LEFT JOIN LATERAL unnest(s.present) p ON true
        GROUP BY s.campaign_id, s.session_id
    ) c;
    RETURN NULL;
END $$;

CREATE TRIGGER scenes_notify_insert AFTER INSERT ON scenes
    REFERENCING NEW TABLE AS changed_scenes FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_scenes();
CREATE TRIGGER scenes_notify_update AFTER UPDATE ON scenes
    REFERENCING OLD TABLE AS old_scenes NEW TABLE AS new_scenes FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_scenes_updated();
CREATE TRIGGER scenes_notify_delete AFTER DELETE ON scenes
    REFERENCING OLD TABLE AS changed_scenes FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_scenes();
