-- Recording a session while it is played (the recorder endpoint, `glyphoxa-mcp record`).

-- Temporary facts of one session ("the party is disguised as merchants"): shown in the hot
-- context of every NPC, or of one, until the session ends. A key names each, so setting it
-- again replaces it. Changes reach hot-context subscribers like a new transcript line.
CREATE TABLE session_facts (
    campaign_id  text NOT NULL,
    session_id   text NOT NULL,
    key          text NOT NULL CHECK (glyphoxa_valid_key(key)),
    npc_id       text,
    text         text NOT NULL CHECK (btrim(text) <> '' AND length(text) <= 2000),
    set_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, session_id, key),
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE,
    FOREIGN KEY (campaign_id, npc_id) REFERENCES entities (campaign_id, id) ON DELETE CASCADE
);

CREATE TRIGGER session_facts_notify_insert AFTER INSERT ON session_facts
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_transcript();
CREATE TRIGGER session_facts_notify_update AFTER UPDATE ON session_facts
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_transcript();
CREATE TRIGGER session_facts_notify_delete AFTER DELETE ON session_facts
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_transcript();

-- Extraction runs during play, a scene at a time, and again at `session end` for what is
-- left: each line is read by the model once, so nothing is proposed to the DM twice (and a
-- rumour the DM rejected is not proposed again by the same lines).
ALTER TABLE session_entries ADD COLUMN extracted boolean NOT NULL DEFAULT false;

-- A session ended while the LLM could not be reached has the offline summary; it waits
-- for `session end --retry-llm`.
ALTER TABLE sessions ADD COLUMN llm_pending boolean NOT NULL DEFAULT false;
