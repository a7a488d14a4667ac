-- Word that travels, and what cites no line, taught only to whom it logically reached.
--
-- Word passed through a group (a faction) from a member whose membership is secret reached
-- the other members even where they may not know of it, and told them who passed it on: a
-- membership the DM kept to themselves was named to every member. Word now leaves a group
-- only for members who may know the teller belongs to it.
--
-- A fact or relationship that cites no line of its session (an LLM may draw one from
-- several) was taught to every NPC that heard any line, so an NPC in one scene learned what
-- was said in another. It is now taught to those who heard every line of the session.
--
-- Scenes' word is read again; facts and relationships taught before keep what they were
-- taught.

CREATE OR REPLACE FUNCTION glyphoxa_word_of(of_campaign text, present text[], at_location text)
RETURNS jsonb LANGUAGE sql STABLE
AS $$
    WITH RECURSIVE settings AS (
        SELECT c.news_hops AS hops, glyphoxa_news_types(of_campaign) AS carriers
        FROM campaigns c WHERE c.id = of_campaign AND c.knowledge = 'witnessed'
    ),
    walk (node, is_group, hops, teller, joined_secret, joined_known_by) AS (
        SELECT w, false, 0, w, false, '{}'::text[] FROM unnest(present) w
        WHERE EXISTS (SELECT FROM settings)
        UNION
        SELECT next.id, next.type = 'faction',
               walk.hops + CASE WHEN next.type = 'faction' THEN 0 ELSE 1 END,
               CASE WHEN walk.is_group THEN walk.teller ELSE walk.node END,
               CASE WHEN next.type = 'faction' THEN tie.secret ELSE false END,
               CASE WHEN next.type = 'faction' THEN tie.known_by ELSE '{}'::text[] END
        FROM walk
        CROSS JOIN settings s
        CROSS JOIN LATERAL (
            SELECT r.target_id AS other, r.secret, r.known_by FROM relationships r
            WHERE r.campaign_id = of_campaign AND r.source_id = walk.node
              AND r.rel_type = ANY(s.carriers)
            UNION ALL
            SELECT r.source_id, r.secret, r.known_by FROM relationships r
            WHERE r.campaign_id = of_campaign AND r.target_id = walk.node
              AND r.rel_type = ANY(s.carriers)
        ) tie
        JOIN entities next ON next.campaign_id = of_campaign AND next.id = tie.other
        -- Word goes no further from who heard it at the last hop (a group reached there
        -- would pass it on a hop too far): their ties are not even read.
        WHERE walk.hops < s.hops
          AND (next.type = 'npc' OR (next.type = 'faction' AND NOT walk.is_group))
          AND walk.hops + CASE WHEN next.type = 'faction' THEN 0 ELSE 1 END <= s.hops
          AND (next.type = 'faction' OR (
                   glyphoxa_visible(tie.secret, tie.known_by, next.id)
                   -- Out of a group, only to members who may know the teller belongs to it.
                   AND glyphoxa_visible(walk.joined_secret, walk.joined_known_by, next.id)))
    ),
    hearers AS (
        SELECT DISTINCT ON (w.node) w.node AS hearer, w.teller
        FROM walk w WHERE NOT w.is_group AND w.hops > 0 AND w.node <> ALL(present)
        ORDER BY w.node, w.hops, w.teller
    ),
    residents AS (
        SELECT r.source_id AS hearer FROM relationships r
        JOIN entities e ON e.campaign_id = of_campaign AND e.id = r.source_id AND e.type = 'npc'
        WHERE EXISTS (SELECT FROM settings) AND r.campaign_id = of_campaign
          AND r.target_id = at_location AND r.rel_type = 'LOCATED_AT'
          AND glyphoxa_visible(r.secret, r.known_by, r.source_id)
          AND r.source_id <> ALL(present)
    )
    SELECT coalesce(jsonb_object_agg(heard.hearer, heard.teller), '{}')
    FROM (
        SELECT coalesce(h.hearer, r.hearer) AS hearer,
               CASE WHEN t.id IS NOT NULL AND glyphoxa_visible(t.secret, t.known_by, h.hearer)
                    THEN h.teller END AS teller
        FROM hearers h
        FULL JOIN residents r ON r.hearer = h.hearer
        LEFT JOIN entities t ON t.campaign_id = of_campaign AND t.id = h.teller
    ) heard
$$;

-- Only the scenes whose word changes: an update of a scene hears its span again.
UPDATE scenes s SET word = now.word
FROM (SELECT campaign_id, session_id, started_at,
             glyphoxa_word_of(campaign_id, present, location_id) AS word
      FROM scenes) now
WHERE (s.campaign_id, s.session_id, s.started_at)
      = (now.campaign_id, now.session_id, now.started_at)
  AND s.word IS DISTINCT FROM now.word;

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
