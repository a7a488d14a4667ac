-- A new line reaches the subscribers of the NPCs who heard it, and no others (no side
-- channel): told of every line, an NPC's client learned when talk went on in a scene it
-- was not in, though never what was said. A notification names the hearers of the
-- statement's lines (sql/034's 'npcs'); lines anyone hears (a shared campaign) still reach
-- every NPC, and lines only the DM reads reach no one. A line forgotten still reaches
-- everyone (sql/030): a subscriber may hold it whoever heard it.
CREATE FUNCTION glyphoxa_notify_new_lines() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'glyphoxa_changes',
        json_strip_nulls(json_build_object(
            'campaign', c.campaign_id, 'kind', 'transcript', 'session', c.session_id,
            'removed', false,
            'npcs', CASE WHEN NOT c.everyone AND cardinality(c.hearers) <= 200
                         THEN c.hearers END
        ))::text
    )
    FROM (
        SELECT n.campaign_id, n.session_id,
               glyphoxa_sorted_set(array_agg(h)) AS hearers,
               bool_or(n.heard_by IS NULL) AS everyone
        FROM changed_rows n
        LEFT JOIN LATERAL unnest(n.heard_by) h ON true
        WHERE NOT n.dm_only
        GROUP BY n.campaign_id, n.session_id
    ) c;
    RETURN NULL;
END $$;

DROP TRIGGER session_entries_notify ON session_entries;
CREATE TRIGGER session_entries_notify AFTER INSERT ON session_entries
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_new_lines();
