-- Who knows what (issue 30). In a campaign whose knowledge is 'witnessed', an NPC reads the
-- lines of the scenes it was present in and its own lines, nothing else verbatim; in a
-- 'shared' one (what a campaign made before this keeps) it reads every line, as before.
-- Campaigns made from now on are witnessed.
ALTER TABLE campaigns
    ADD COLUMN knowledge text NOT NULL DEFAULT 'shared'
        CONSTRAINT knowledge_is_shared_or_witnessed CHECK (knowledge IN ('shared', 'witnessed')),
    -- How far word of a scene travels from those present, over relationships that carry news.
    ADD COLUMN news_hops integer NOT NULL DEFAULT 1
        CONSTRAINT news_hops_from_0_to_3 CHECK (news_hops BETWEEN 0 AND 3),
    -- The DM's own relationship types that carry news, beside the built-in ones.
    ADD COLUMN news_types text[] NOT NULL DEFAULT '{}';
ALTER TABLE campaigns ALTER COLUMN knowledge SET DEFAULT 'witnessed';

-- Who may read a line or a passage verbatim (besides the DM), kept by the triggers below:
-- NULL in a shared campaign (everyone), else the NPCs present in its scene and the NPC who
-- said it. `heard_by_dm` is the DM's own choice for one line, which wins over the scene.
ALTER TABLE session_entries ADD COLUMN heard_by text[], ADD COLUMN heard_by_dm text[];
ALTER TABLE chunks ADD COLUMN heard_by text[];

-- THE rule for lines and passages, the one place it is written: the DM (viewer NULL) reads
-- everything; an NPC reads what the DM did not keep to themselves and what it heard.
-- Plain SQL, so the planner inlines it into every query that calls it.
CREATE FUNCTION glyphoxa_may_read(dm_only boolean, heard_by text[], viewer text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT $3 IS NULL OR (NOT $1 AND ($2 IS NULL OR $3 = ANY($2))) $$;

-- The NPCs who spoke in a session: a line outside any scene is heard by them.
CREATE TABLE session_npcs (
    campaign_id text NOT NULL,
    session_id  text NOT NULL,
    npc_id      text NOT NULL,
    PRIMARY KEY (campaign_id, session_id, npc_id),
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE
);

CREATE FUNCTION glyphoxa_sorted_set(items text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}') FROM unnest($1) x WHERE x IS NOT NULL $$;

-- The NPC who said a line: the one named as its NPC, or an NPC whose id is the speaker's.
CREATE FUNCTION glyphoxa_line_npc(campaign text, npc text, speaker text) RETURNS text
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(npc, (SELECT e.id FROM entities e
                          WHERE e.campaign_id = campaign AND e.id = speaker AND e.type = 'npc'))
$$;

CREATE FUNCTION glyphoxa_witnessed(campaign text) RETURNS boolean LANGUAGE sql STABLE
AS $$ SELECT EXISTS (SELECT FROM campaigns c WHERE c.id = campaign AND c.knowledge = 'witnessed') $$;

-- Who hears a line: in a witnessed campaign the DM's choice for it, else those present in
-- its scene (the last to start at or before it), else, outside any scene, the NPCs who
-- speak in the session; and always the NPC who said it.
CREATE FUNCTION glyphoxa_line_heard_by(
    campaign text, session text, spoken timestamptz, npc text, speaker text, dm_choice text[]
) RETURNS text[] LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN glyphoxa_witnessed(campaign) THEN glyphoxa_sorted_set(
        coalesce(
            dm_choice,
            (SELECT s.present FROM scenes s
             WHERE s.campaign_id = campaign AND s.session_id = session AND s.started_at <= spoken
             ORDER BY s.started_at DESC LIMIT 1),
            (SELECT array_agg(n.npc_id) FROM session_npcs n
             WHERE n.campaign_id = campaign AND n.session_id = session),
            '{}')
        || glyphoxa_line_npc(campaign, npc, speaker))
    END
$$;

-- Who may read a passage: those who heard every line of it (a passage holds its lines
-- whole: its words and its vector carry each of them). A passage that names no lines (made
-- by hand, or before lines were tracked) is read by those who heard every line of its span,
-- or of its session when it has no span.
CREATE FUNCTION glyphoxa_chunk_heard_by(
    campaign text, session text, entry_ids bigint[],
    started timestamptz DEFAULT NULL, ended timestamptz DEFAULT NULL
) RETURNS text[] LANGUAGE sql STABLE
AS $$
    WITH named AS (
        SELECT e.heard_by FROM session_entries e
        WHERE e.campaign_id = campaign AND e.id = ANY(entry_ids)
    ), spanned AS (
        SELECT e.heard_by FROM session_entries e
        WHERE NOT EXISTS (SELECT FROM named)
          AND e.campaign_id = campaign AND e.session_id = session
          AND (started IS NULL OR e.spoken_at BETWEEN started AND coalesce(ended, started))
    ), lines AS (
        SELECT heard_by FROM named WHERE heard_by IS NOT NULL
        UNION ALL
        SELECT heard_by FROM spanned WHERE heard_by IS NOT NULL
    )
    SELECT CASE
        WHEN NOT glyphoxa_witnessed(campaign) OR session IS NULL THEN NULL
        WHEN NOT EXISTS (SELECT FROM lines) THEN
            coalesce((SELECT array_agg(n.npc_id ORDER BY n.npc_id) FROM session_npcs n
                      WHERE n.campaign_id = campaign AND n.session_id = session), '{}')
        ELSE coalesce((SELECT array_agg(x ORDER BY x) FROM (
                           SELECT x FROM lines, unnest(lines.heard_by) x GROUP BY x
                           HAVING count(*) = (SELECT count(*) FROM lines)) common), '{}')
    END
$$;

CREATE FUNCTION glyphoxa_set_line_heard_by() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.heard_by := glyphoxa_line_heard_by(NEW.campaign_id, NEW.session_id, NEW.spoken_at,
                                           NEW.npc_id, NEW.speaker_id, NEW.heard_by_dm);
    RETURN NEW;
END $$;

CREATE TRIGGER session_entries_heard_by
    BEFORE INSERT OR UPDATE OF spoken_at, npc_id, speaker_id, heard_by_dm ON session_entries
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_set_line_heard_by();

CREATE FUNCTION glyphoxa_set_chunk_heard_by() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.heard_by := glyphoxa_chunk_heard_by(NEW.campaign_id, NEW.session_id, NEW.entry_ids,
                                            NEW.started_at, NEW.ended_at);
    RETURN NEW;
END $$;

CREATE TRIGGER chunks_heard_by
    BEFORE INSERT OR UPDATE OF session_id, entry_ids, started_at, ended_at ON chunks
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_set_chunk_heard_by();

-- A session's lines and passages heard again (its scenes, its speakers or the campaign's
-- setting changed): only rows whose readers change are written.
-- Who hears a session's lines is worked out one transaction at a time per session, and by
-- what that transaction sees once it holds the turn: the triggers of new lines, new passages
-- and changed scenes each take it, then read afresh (a statement after the lock has a new
-- snapshot). Without it a scene changed while a line is added would be missed by both: each
-- works out its rows without the other's, not yet committed.
CREATE FUNCTION glyphoxa_hearing_turn(campaign text, session text) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(hashtextextended('glyphoxa hear ' || campaign || '/' || session, 0))
$$;

CREATE FUNCTION glyphoxa_hear_session(campaign text, session text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM glyphoxa_hear_span(campaign, session, '-infinity', 'infinity');
END $$;

-- The lines of a session spoken in [span_from, span_until) heard again, and the passages
-- holding any of them: what a change to one scene touches, its lines up to the next scene
-- (a session of a thousand lines is not heard again whole for it).
CREATE FUNCTION glyphoxa_hear_span(
    campaign text, session text, span_from timestamptz, span_until timestamptz
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM glyphoxa_hearing_turn(campaign, session);
    UPDATE session_entries e SET heard_by = n.heard_by
    FROM (SELECT x.id, glyphoxa_line_heard_by(x.campaign_id, x.session_id, x.spoken_at,
                                              x.npc_id, x.speaker_id, x.heard_by_dm) AS heard_by
          FROM session_entries x
          WHERE x.campaign_id = campaign AND x.session_id = session
            AND x.spoken_at >= span_from AND x.spoken_at < span_until) n
    WHERE e.id = n.id AND e.heard_by IS DISTINCT FROM n.heard_by;
    -- A passage without a start or an end may hold any line of the session after it.
    UPDATE chunks c SET heard_by = n.heard_by
    FROM (SELECT x.id, glyphoxa_chunk_heard_by(x.campaign_id, x.session_id, x.entry_ids,
                                               x.started_at, x.ended_at) AS heard_by
          FROM chunks x
          WHERE x.campaign_id = campaign AND x.session_id = session
            AND x.started_at < span_until
            AND (x.ended_at IS NULL OR x.ended_at >= span_from)
          UNION ALL
          SELECT x.id, glyphoxa_chunk_heard_by(x.campaign_id, x.session_id, x.entry_ids,
                                               x.started_at, x.ended_at)
          FROM chunks x
          WHERE x.campaign_id = campaign AND x.session_id = session AND x.started_at IS NULL) n
    WHERE c.id = n.id AND c.heard_by IS DISTINCT FROM n.heard_by;
END $$;

-- The span of its session's lines a scene starting at `started` holds: up to the start of
-- the next scene there is now.
CREATE FUNCTION glyphoxa_scene_end(campaign text, session text, started timestamptz)
RETURNS timestamptz LANGUAGE sql STABLE
AS $$
    SELECT coalesce(min(s.started_at), 'infinity') FROM scenes s
    WHERE s.campaign_id = campaign AND s.session_id = session AND s.started_at > started
$$;

CREATE FUNCTION glyphoxa_hear_passages(campaign text, session text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chunks c SET heard_by = n.heard_by
    FROM (SELECT x.id, glyphoxa_chunk_heard_by(x.campaign_id, x.session_id, x.entry_ids,
                                               x.started_at, x.ended_at) AS heard_by
          FROM chunks x WHERE x.campaign_id = campaign AND x.session_id = session) n
    WHERE c.id = n.id AND c.heard_by IS DISTINCT FROM n.heard_by;
END $$;

-- An NPC who speaks in a scene was there: it joins those present in the scene its new lines
-- fall in (`lines`: (session, spoken_at, npc) of new lines), which makes its session heard
-- again (scenes_updated). Only for new lines and new scenes (`scenes_to_complete`: 'session|start' of the
-- scenes to complete, NULL for any): a DM who takes an NPC out of a scene afterwards is not
-- overruled.
CREATE FUNCTION glyphoxa_speakers_present(campaign text, lines jsonb, scenes_to_complete text[] DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF NOT glyphoxa_witnessed(campaign) THEN
        RETURN;
    END IF;
    WITH spoken AS (
        SELECT DISTINCT l.session_id, l.npc_id,
               (SELECT s.started_at FROM scenes s
                WHERE s.campaign_id = campaign AND s.session_id = l.session_id
                  AND s.started_at <= l.spoken_at
                ORDER BY s.started_at DESC LIMIT 1) AS scene_start
        FROM jsonb_to_recordset(lines) AS l(session_id text, spoken_at timestamptz, npc_id text)
        WHERE l.npc_id IS NOT NULL
    ), missing AS (
        SELECT sp.session_id, sp.scene_start, array_agg(sp.npc_id ORDER BY sp.npc_id) AS npcs
        FROM spoken sp JOIN scenes s
          ON s.campaign_id = campaign AND s.session_id = sp.session_id
         AND s.started_at = sp.scene_start
        WHERE NOT sp.npc_id = ANY(s.present)
          AND (scenes_to_complete IS NULL
               OR sp.session_id || '|' || sp.scene_start::text = ANY(scenes_to_complete))
        GROUP BY sp.session_id, sp.scene_start
    )
    UPDATE scenes s SET present = s.present || m.npcs
    FROM missing m
    WHERE s.campaign_id = campaign AND s.session_id = m.session_id
      AND s.started_at = m.scene_start;
END $$;

-- New lines: their NPCs join the session's speakers (an NPC speaking there for the first
-- time hears the session's lines outside any scene) and the scenes they speak in.
CREATE FUNCTION glyphoxa_lines_added() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    joined record;
BEGIN
    FOR joined IN
        SELECT r.campaign_id,
               jsonb_agg(jsonb_build_object(
                   'session_id', r.session_id, 'spoken_at', r.spoken_at,
                   'npc_id', glyphoxa_line_npc(r.campaign_id, r.npc_id, r.speaker_id))) AS lines
        FROM added_rows r GROUP BY r.campaign_id
    LOOP
        PERFORM glyphoxa_speakers_present(joined.campaign_id, joined.lines);
    END LOOP;
    FOR joined IN
        WITH speakers AS (
            SELECT DISTINCT r.campaign_id, r.session_id,
                   glyphoxa_line_npc(r.campaign_id, r.npc_id, r.speaker_id) AS npc_id
            FROM added_rows r
        ), inserted AS (
            INSERT INTO session_npcs (campaign_id, session_id, npc_id)
            SELECT * FROM speakers WHERE npc_id IS NOT NULL
            ORDER BY 1, 2, 3
            ON CONFLICT DO NOTHING
            RETURNING campaign_id, session_id
        )
        SELECT DISTINCT i.campaign_id, i.session_id FROM inserted i
        WHERE glyphoxa_witnessed(i.campaign_id)
    LOOP
        PERFORM glyphoxa_hear_session(joined.campaign_id, joined.session_id);
    END LOOP;
    -- The new lines once more, in their session's turn (see glyphoxa_hearing_turn).
    FOR joined IN
        SELECT DISTINCT r.campaign_id, r.session_id FROM added_rows r
        WHERE glyphoxa_witnessed(r.campaign_id) ORDER BY 1, 2
    LOOP
        PERFORM glyphoxa_hearing_turn(joined.campaign_id, joined.session_id);
    END LOOP;
    UPDATE session_entries e SET heard_by = n.heard_by
    FROM (SELECT r.id, glyphoxa_line_heard_by(r.campaign_id, r.session_id, r.spoken_at,
                                              r.npc_id, r.speaker_id, r.heard_by_dm) AS heard_by
          FROM added_rows r WHERE glyphoxa_witnessed(r.campaign_id)) n
    WHERE e.id = n.id AND e.heard_by IS DISTINCT FROM n.heard_by;
    RETURN NULL;
END $$;

CREATE TRIGGER session_entries_speakers AFTER INSERT ON session_entries
    REFERENCING NEW TABLE AS added_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_lines_added();

-- New passages once more, in their session's turn (see glyphoxa_hearing_turn).
CREATE FUNCTION glyphoxa_passages_added() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    joined record;
BEGIN
    FOR joined IN
        SELECT DISTINCT r.campaign_id, r.session_id FROM added_rows r
        WHERE r.session_id IS NOT NULL AND glyphoxa_witnessed(r.campaign_id) ORDER BY 1, 2
    LOOP
        PERFORM glyphoxa_hearing_turn(joined.campaign_id, joined.session_id);
    END LOOP;
    UPDATE chunks c SET heard_by = n.heard_by
    FROM (SELECT r.id, glyphoxa_chunk_heard_by(r.campaign_id, r.session_id, r.entry_ids,
                                               r.started_at, r.ended_at) AS heard_by
          FROM added_rows r
          WHERE r.session_id IS NOT NULL AND glyphoxa_witnessed(r.campaign_id)) n
    WHERE c.id = n.id AND c.heard_by IS DISTINCT FROM n.heard_by;
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_heard_again AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS added_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_passages_added();

-- A line the DM gave new hearers: the passages holding it follow.
CREATE FUNCTION glyphoxa_line_hearers_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chunks c
    SET heard_by = glyphoxa_chunk_heard_by(c.campaign_id, c.session_id, c.entry_ids,
                                           c.started_at, c.ended_at)
    WHERE c.campaign_id = NEW.campaign_id AND c.session_id = NEW.session_id
      AND c.entry_ids @> ARRAY[NEW.id];
    RETURN NULL;
END $$;

CREATE TRIGGER session_entries_hearers_changed AFTER UPDATE OF heard_by_dm ON session_entries
    FOR EACH ROW WHEN (OLD.heard_by IS DISTINCT FROM NEW.heard_by)
    EXECUTE FUNCTION glyphoxa_line_hearers_changed();

-- Scenes added, changed or removed: the lines each held before and holds now are heard
-- again (from its start to the next scene's; a removed scene's lines now belong to the one
-- before it).
CREATE FUNCTION glyphoxa_hear_scenes(changed jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    touched record;
BEGIN
    -- The spans are read once no other change to their sessions is under way.
    FOR touched IN
        SELECT DISTINCT c.campaign_id, c.session_id
        FROM jsonb_to_recordset(changed) AS c(campaign_id text, session_id text)
        ORDER BY 1, 2
    LOOP
        PERFORM glyphoxa_hearing_turn(touched.campaign_id, touched.session_id);
    END LOOP;
    FOR touched IN
        SELECT DISTINCT c.campaign_id, c.session_id, c.started_at,
               glyphoxa_scene_end(c.campaign_id, c.session_id, c.started_at) AS ended_at
        FROM jsonb_to_recordset(changed)
             AS c(campaign_id text, session_id text, started_at timestamptz)
        ORDER BY 1, 2, 3
    LOOP
        PERFORM glyphoxa_hear_span(touched.campaign_id, touched.session_id,
                                   touched.started_at, touched.ended_at);
    END LOOP;
END $$;

CREATE FUNCTION glyphoxa_scenes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM glyphoxa_hear_scenes(coalesce(
        (SELECT jsonb_agg(jsonb_build_object('campaign_id', s.campaign_id,
                                             'session_id', s.session_id,
                                             'started_at', s.started_at))
         FROM changed_scenes s), '[]'));
    RETURN NULL;
END $$;

CREATE FUNCTION glyphoxa_scenes_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM glyphoxa_hear_scenes(coalesce(
        (SELECT jsonb_agg(jsonb_build_object('campaign_id', s.campaign_id,
                                             'session_id', s.session_id,
                                             'started_at', s.started_at))
         FROM (SELECT campaign_id, session_id, started_at FROM old_scenes
               UNION SELECT campaign_id, session_id, started_at FROM new_scenes) s), '[]'));
    RETURN NULL;
END $$;

-- New scenes: the NPCs who already spoke in them were there.
CREATE FUNCTION glyphoxa_scenes_added() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN
        SELECT e.campaign_id,
               jsonb_agg(jsonb_build_object(
                   'session_id', e.session_id, 'spoken_at', e.spoken_at,
                   'npc_id', glyphoxa_line_npc(e.campaign_id, e.npc_id, e.speaker_id))) AS lines,
               (SELECT array_agg(n.session_id || '|' || n.started_at::text) FROM changed_scenes n
                WHERE n.campaign_id = e.campaign_id) AS added
        FROM (SELECT n.campaign_id, n.session_id, n.started_at,
                     glyphoxa_scene_end(n.campaign_id, n.session_id, n.started_at) AS ended_at
              FROM changed_scenes n) c
        JOIN session_entries e ON e.campaign_id = c.campaign_id AND e.session_id = c.session_id
         AND e.spoken_at >= c.started_at AND e.spoken_at < c.ended_at
        GROUP BY e.campaign_id
    LOOP
        PERFORM glyphoxa_speakers_present(touched.campaign_id, touched.lines, touched.added);
    END LOOP;
    PERFORM glyphoxa_hear_scenes(coalesce(
        (SELECT jsonb_agg(jsonb_build_object('campaign_id', s.campaign_id,
                                             'session_id', s.session_id,
                                             'started_at', s.started_at))
         FROM changed_scenes s), '[]'));
    RETURN NULL;
END $$;

CREATE TRIGGER scenes_added AFTER INSERT ON scenes
    REFERENCING NEW TABLE AS changed_scenes FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_scenes_added();
CREATE TRIGGER scenes_updated AFTER UPDATE ON scenes
    REFERENCING OLD TABLE AS old_scenes NEW TABLE AS new_scenes FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_scenes_updated();
CREATE TRIGGER scenes_removed AFTER DELETE ON scenes
    REFERENCING OLD TABLE AS changed_scenes FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_scenes_changed();

-- The campaign's setting changed: every session is heard again.
CREATE FUNCTION glyphoxa_knowledge_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    session record;
BEGIN
    FOR session IN SELECT s.id FROM sessions s WHERE s.campaign_id = NEW.id ORDER BY s.id LOOP
        PERFORM glyphoxa_hear_session(NEW.id, session.id);
    END LOOP;
    RETURN NULL;
END $$;

CREATE TRIGGER campaigns_knowledge_changed AFTER UPDATE OF knowledge ON campaigns
    FOR EACH ROW WHEN (OLD.knowledge IS DISTINCT FROM NEW.knowledge)
    EXECUTE FUNCTION glyphoxa_knowledge_changed();

-- A session's NPC speakers for the lines already stored (an upgraded campaign is shared, so
-- nothing is heard again here: its DM turns witnessing on).
INSERT INTO session_npcs (campaign_id, session_id, npc_id)
SELECT DISTINCT campaign_id, session_id, glyphoxa_line_npc(campaign_id, npc_id, speaker_id)
FROM session_entries
WHERE glyphoxa_line_npc(campaign_id, npc_id, speaker_id) IS NOT NULL;

-- Word that travels. What a scene taught (a fact or relationship learned from its lines) is
-- known to those present (`witnesses`, put in known_by, the field the DM edits), and to
-- those word of it reaches (`word`: each hearer with the NPC who told them, or null when no
-- one they know did): NPCs within the campaign's news_hops of a witness over relationships
-- that carry news, and NPCs who live where it happened. Word travels along the ties there
-- are when the scene is taught; a tie made later carries no old news. The DM's decision
-- wins: once known_by is not what witnessing made it, or the item is secret, nothing more
-- is taught. A scene's own `word` says who heard of it (its gist, not its lines).
ALTER TABLE facts ADD COLUMN witnesses text[], ADD COLUMN word jsonb;
ALTER TABLE relationships ADD COLUMN witnesses text[], ADD COLUMN word jsonb;
-- NULL until taught: a scene inserted with its word (an imported archive, a branch) keeps it.
ALTER TABLE scenes ADD COLUMN word jsonb;

CREATE FUNCTION glyphoxa_news_types(campaign text) RETURNS text[] LANGUAGE sql STABLE
AS $$
    SELECT ARRAY['KNOWS', 'MEMBER_OF', 'EMPLOYED_BY', 'CHILD_OF', 'ALLIED_WITH'] || c.news_types
    FROM campaigns c WHERE c.id = campaign
$$;

-- Who hears of what those `present` saw at `at_location`: {hearer: teller or null}.
-- (Parameter names no column has: in SQL a column wins over a parameter of its name.) Arriving at an
-- NPC is a hop; word passes through a group (a faction its members belong to) to the other
-- members without one, but not from group to group. A tie carries word to an NPC only when
-- that NPC may know the tie, and the teller is named only to a hearer who may know them.
CREATE FUNCTION glyphoxa_word_of(of_campaign text, present text[], at_location text)
RETURNS jsonb LANGUAGE sql STABLE
AS $$
    WITH RECURSIVE settings AS (
        SELECT c.news_hops AS hops, glyphoxa_news_types(of_campaign) AS carriers
        FROM campaigns c WHERE c.id = of_campaign AND c.knowledge = 'witnessed'
    ),
    walk (node, is_group, hops, teller) AS (
        SELECT w, false, 0, w FROM unnest(present) w WHERE EXISTS (SELECT FROM settings)
        UNION
        SELECT next.id, next.type = 'faction',
               walk.hops + CASE WHEN next.type = 'faction' THEN 0 ELSE 1 END,
               CASE WHEN walk.is_group THEN walk.teller ELSE walk.node END
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
          AND (next.type = 'faction' OR glyphoxa_visible(tie.secret, tie.known_by, next.id))
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

CREATE FUNCTION glyphoxa_scene_word() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' OR NEW.word IS NULL THEN
        NEW.word := glyphoxa_word_of(NEW.campaign_id, NEW.present, NEW.location_id);
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER scenes_word BEFORE INSERT OR UPDATE OF present, location_id ON scenes
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_scene_word();

-- What a line taught (`line`: the line a fact or relationship cites; without one, the whole
-- session, whose witnesses are `everyone` who heard any of it): its witnesses, who word of
-- it reached, and so who knows it.
CREATE TYPE glyphoxa_lesson AS (witnesses text[], word jsonb, known_by text[]);

CREATE FUNCTION glyphoxa_lesson_of(campaign text, session text, line bigint, everyone text[])
RETURNS glyphoxa_lesson LANGUAGE sql STABLE
AS $$
    WITH cited AS (
        SELECT e.heard_by, e.spoken_at FROM session_entries e
        WHERE e.campaign_id = campaign AND e.id = line
    ), taught AS (
        SELECT coalesce((SELECT heard_by FROM cited), everyone) AS witnesses,
               (SELECT s.location_id FROM scenes s
                WHERE s.campaign_id = campaign AND s.session_id = session
                  AND s.started_at <= (SELECT spoken_at FROM cited)
                ORDER BY s.started_at DESC LIMIT 1) AS location
    ), heard AS (
        SELECT t.witnesses, glyphoxa_word_of(campaign, t.witnesses, t.location) AS word
        FROM taught t
    )
    SELECT h.witnesses, h.word,
           glyphoxa_sorted_set(h.witnesses || ARRAY(SELECT jsonb_object_keys(h.word)))
    FROM heard h
$$;

-- What the session's scenes taught, known to their witnesses and to those word reached:
-- the facts and relationships learned in it that the DM has not decided about (not secret,
-- known_by empty, and not written by the DM) and that were not taught before. What is
-- known to nobody (no NPC was there, and word reached none) is the DM's alone.
CREATE FUNCTION glyphoxa_teach_session(campaign text, session text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    everyone text[];
    taught integer;
    changed integer;
BEGIN
    IF NOT glyphoxa_witnessed(campaign) THEN
        RETURN 0;
    END IF;
    everyone := (SELECT glyphoxa_sorted_set(array_agg(h)) FROM session_entries e,
                        unnest(e.heard_by) h
                 WHERE e.campaign_id = campaign AND e.session_id = session AND NOT e.dm_only);
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

-- What an NPC hears of depends on the campaign's news settings: changing them moves the
-- knowledge counter, so cached identities and scopes are made again (sql/015).
CREATE FUNCTION glyphoxa_news_settings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO knowledge_versions AS v (campaign_id, version) VALUES (NEW.id, 1)
    ON CONFLICT (campaign_id) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER campaigns_news_settings_changed
    AFTER UPDATE OF knowledge, news_hops, news_types ON campaigns
    FOR EACH ROW WHEN ((OLD.knowledge, OLD.news_hops, OLD.news_types)
                       IS DISTINCT FROM (NEW.knowledge, NEW.news_hops, NEW.news_types))
    EXECUTE FUNCTION glyphoxa_news_settings_changed();
