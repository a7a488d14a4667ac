-- A session's summary in parts (issue 31), one per scene in order (`ordinal`; a session
-- without scenes has one part, its scene_started_at NULL): what it says (`text`, what the
-- session's summary joins) and a sentence of what it was about (`gist`, quoting no line),
-- so a reader who was not in a scene can be told of it without its lines. Written with the
-- summary by `session end` and `process`; gone with the session.
CREATE TABLE summary_parts (
    campaign_id      text NOT NULL,
    session_id       text NOT NULL,
    ordinal          integer NOT NULL CHECK (ordinal >= 0),
    scene_started_at timestamptz,
    text             text NOT NULL CHECK (btrim(text) <> ''),
    gist             text NOT NULL CHECK (btrim(gist) <> ''),
    PRIMARY KEY (campaign_id, session_id, ordinal),
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE
);
