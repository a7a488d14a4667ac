-- search_facts ranks by BM25 like the transcript searches (ts_rank_cd knows nothing of how
-- rare a word is, and ranked every fact holding any query word: 80 ms for "near", in 12% of
-- 20,000 facts), so the facts are counted like the passages and utterances (sql/010).
ALTER TABLE campaign_row_counts DROP CONSTRAINT campaign_row_counts_table_name_check;
ALTER TABLE campaign_row_counts ADD CONSTRAINT campaign_row_counts_table_name_check
    CHECK (table_name IN ('chunks', 'session_entries', 'facts'));

INSERT INTO campaign_row_counts (campaign_id, table_name, row_count)
SELECT campaign_id, 'facts', count(*) FROM facts GROUP BY campaign_id;

CREATE TRIGGER facts_counted_in AFTER INSERT ON facts
    REFERENCING NEW TABLE AS inserted_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_count_inserted();
CREATE TRIGGER facts_counted_out AFTER DELETE ON facts
    REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_count_deleted();
