-- Speech-to-text word confidences, kept with each utterance for the correction stages.
ALTER TABLE session_entries ADD COLUMN words jsonb
    CHECK (words IS NULL OR jsonb_typeof(words) = 'array');
