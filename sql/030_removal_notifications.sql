-- A transcript notification says whether rows were removed: a server then drops the hot
-- contexts it keeps for an outage (the last ones built), which may quote a forgotten line.
CREATE OR REPLACE FUNCTION glyphoxa_notify_transcript() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'glyphoxa_changes',
        json_build_object(
            'campaign', campaign_id, 'kind', 'transcript', 'session', session_id,
            'removed', TG_OP = 'DELETE'
        )::text
    )
    FROM (SELECT DISTINCT campaign_id, session_id FROM changed_rows) AS changed;
    RETURN NULL;
END
$$;
