-- get_session_summary's entities, read as an NPC (graph_queries.session_entities): the
-- entities tagged in the session's passages it may read. Without this index each of a
-- session's thousand passages was fetched from the heap for who may read it; with the tags
-- and the two columns the rule reads (sql/032) included, it is an index-only scan. On the
-- reference dataset with scenes: session_entities p95 4.6-8.5 ms -> 2.5 ms, the NPC's
-- get_session_summary p95 11.0-14.0 ms -> 9.5 ms.
CREATE INDEX chunks_read_by_session ON chunks (campaign_id, session_id)
    INCLUDE (entity_ids, dm_only, heard_by);
