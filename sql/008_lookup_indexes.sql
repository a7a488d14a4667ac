-- Lookups the tools make on every call that had no index at reference scale (200,000
-- utterances, 40,000 relationships, 20,000 facts) and scanned whole tables instead:
-- get_session_summary's facts and relationships learnt in a session,
CREATE INDEX facts_by_session ON facts (campaign_id, session_id);
CREATE INDEX relationships_by_session ON relationships (campaign_id, (provenance ->> 'session_id'));
-- and search_sessions' speaker, by id or by name (case-insensitive).
CREATE INDEX session_entries_by_speaker ON session_entries (campaign_id, speaker_id);
CREATE INDEX session_entries_by_speaker_name ON session_entries (campaign_id, lower(speaker_name));
