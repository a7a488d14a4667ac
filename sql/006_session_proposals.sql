-- Entities an LLM found in a session transcript below the confidence threshold wait in the
-- same review queue as VTT imports.
ALTER TABLE pending_entities DROP CONSTRAINT pending_entities_source_check;
ALTER TABLE pending_entities ADD CONSTRAINT pending_entities_source_check
    CHECK (source IN ('foundry', 'roll20', 'csv', 'session'));
