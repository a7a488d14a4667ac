-- A scene's word is worked out again when its session is taught.
--
-- A scene's word (who heard of it, and from whom: its gist in NPCs' summaries) was worked
-- out when the scene was set, while what it taught follows the ties there are when the
-- session is taught (sql/041): a tie removed or made secret before the session ended still
-- carried the scene's gist. Teaching now works the session's scenes' word out first.

CREATE OR REPLACE FUNCTION glyphoxa_teach_session(campaign text, session text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    everyone text[];
    taught integer;
    changed integer;
BEGIN
    IF NOT glyphoxa_witnessed(campaign) THEN
        RETURN 0;
    END IF;
    -- Word travels along the ties there are when the session is taught: the scenes' own
    -- word (their gist in summaries) too, not only what they taught.
    UPDATE scenes s SET word = fresh.word
    FROM (SELECT x.started_at, glyphoxa_word_of(campaign, x.present, x.location_id) AS word
          FROM scenes x WHERE x.campaign_id = campaign AND x.session_id = session) fresh
    WHERE s.campaign_id = campaign AND s.session_id = session
      AND s.started_at = fresh.started_at AND s.word IS DISTINCT FROM fresh.word;
    -- What cites no line may have been said in any of the session's lines, so it is taught
    -- only to those who heard every one of them.
    everyone := (SELECT glyphoxa_sorted_set(array_agg(h))
                 FROM (SELECT DISTINCT h FROM session_entries e, unnest(e.heard_by) h
                       WHERE e.campaign_id = campaign AND e.session_id = session
                         AND NOT e.dm_only) heard
                 WHERE NOT EXISTS (
                     SELECT FROM session_entries e
                     WHERE e.campaign_id = campaign AND e.session_id = session
                       AND NOT e.dm_only AND NOT (heard.h = ANY(e.heard_by))));
    UPDATE facts f
    SET witnesses = (t.lesson).witnesses, word = (t.lesson).word,
        known_by = (t.lesson).known_by, secret = cardinality((t.lesson).known_by) = 0
    FROM (SELECT x.id, glyphoxa_lesson_of(campaign, session, x.source_entry_id, everyone) AS lesson
          FROM facts x
          WHERE x.campaign_id = campaign AND x.session_id = session AND x.witnesses IS NULL
            AND NOT x.secret AND cardinality(x.known_by) = 0
            AND x.provenance ->> 'source' IN ('stated', 'inferred')) t
    WHERE f.id = t.id AND (t.lesson).witnesses IS NOT NULL;
    GET DIAGNOSTICS taught = ROW_COUNT;
    UPDATE relationships r
    SET witnesses = (t.lesson).witnesses, word = (t.lesson).word,
        known_by = (t.lesson).known_by, secret = cardinality((t.lesson).known_by) = 0
    FROM (SELECT x.id, glyphoxa_lesson_of(campaign, session, x.source_entry_id, everyone) AS lesson
          FROM relationships x
          WHERE x.campaign_id = campaign AND x.provenance ->> 'session_id' = session
            AND x.witnesses IS NULL AND NOT x.secret AND cardinality(x.known_by) = 0
            AND x.provenance ->> 'source' IN ('stated', 'inferred')) t
    WHERE r.id = t.id AND (t.lesson).witnesses IS NOT NULL;
    GET DIAGNOSTICS changed = ROW_COUNT;
    RETURN taught + changed;
END $$;
