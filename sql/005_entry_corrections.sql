-- The names put back into each utterance: spans of raw_text and what replaced them, by which
-- stage. `text` is raw_text with these applied, so a correction can always be reviewed or
-- undone from what speech-to-text heard.
ALTER TABLE session_entries ADD COLUMN corrections jsonb NOT NULL DEFAULT '[]'
    CHECK (jsonb_typeof(corrections) = 'array');
