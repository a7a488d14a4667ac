-- Migration 011 kept session_chunk_entities by triggers on every statement that stored
-- passages. `process` stores a session's passages with two writers at once, and both
-- writers' triggers updated the same rows (one per entity of the session): they waited on
-- each other, and ingestion fell from 334 to 258 utterances per second. Processing now
-- recounts a session's row once, when the session's passages are all stored (a few
-- milliseconds: SemanticIndex.tally_session_entities); the triggers go.
DROP TRIGGER chunks_entities_tallied_in ON chunks;
DROP TRIGGER chunks_entities_retallied ON chunks;
DROP TRIGGER chunks_entities_tallied_out ON chunks;
DROP FUNCTION glyphoxa_tally_chunk_entities();
