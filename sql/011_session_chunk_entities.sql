-- get_session_summary lists the entities involved in a session. Those tagged in its passages
-- were found by unnesting the entity ids of every passage of the session: ~1,000 passages
-- and 4,500 ids for 60 distinct entities, 2.7 ms warm at reference scale, most of the
-- tool's budget. The distinct ids are kept here instead, with how many of the session's
-- passages carry each, maintained once per statement from the transition tables.
CREATE TABLE session_chunk_entities (
    campaign_id text NOT NULL,
    session_id  text NOT NULL,
    entity_id   text NOT NULL,
    chunk_count integer NOT NULL CHECK (chunk_count >= 0),
    PRIMARY KEY (campaign_id, session_id, entity_id),
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE
);

INSERT INTO session_chunk_entities (campaign_id, session_id, entity_id, chunk_count)
SELECT campaign_id, session_id, entity_id, count(*)
FROM chunks CROSS JOIN LATERAL unnest(entity_ids) AS entity_id
WHERE session_id IS NOT NULL
GROUP BY campaign_id, session_id, entity_id;

-- One function for the three events: PL/pgSQL plans a statement when it first runs it, so
-- the branch naming a transition table the event lacks is never planned.
CREATE FUNCTION glyphoxa_tally_chunk_entities() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        -- A session being deleted takes its rows with it (ON DELETE CASCADE), before or
        -- after this: then there is nothing left to update.
        UPDATE session_chunk_entities s SET chunk_count = s.chunk_count - r.removed
        FROM (
            SELECT campaign_id, session_id, entity_id, count(*) AS removed
            FROM removed_rows CROSS JOIN LATERAL unnest(entity_ids) AS entity_id
            WHERE session_id IS NOT NULL
            GROUP BY campaign_id, session_id, entity_id
        ) r
        WHERE (s.campaign_id, s.session_id, s.entity_id) = (r.campaign_id, r.session_id, r.entity_id);
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO session_chunk_entities AS s (campaign_id, session_id, entity_id, chunk_count)
        SELECT campaign_id, session_id, entity_id, count(*)
        FROM added_rows CROSS JOIN LATERAL unnest(entity_ids) AS entity_id
        WHERE session_id IS NOT NULL
        GROUP BY campaign_id, session_id, entity_id
        ON CONFLICT (campaign_id, session_id, entity_id)
        DO UPDATE SET chunk_count = s.chunk_count + EXCLUDED.chunk_count;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM session_chunk_entities s
        USING (SELECT DISTINCT campaign_id, session_id FROM removed_rows) r
        WHERE s.campaign_id = r.campaign_id AND s.session_id = r.session_id
          AND s.chunk_count = 0;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_entities_tallied_in AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS added_rows
    FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_tally_chunk_entities();
CREATE TRIGGER chunks_entities_retallied AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS removed_rows NEW TABLE AS added_rows
    FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_tally_chunk_entities();
CREATE TRIGGER chunks_entities_tallied_out AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS removed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_tally_chunk_entities();

-- Migration 009 covered this lookup with an index over every passage; nothing else reads it.
DROP INDEX chunks_entities_by_session;
