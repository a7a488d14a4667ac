-- BM25 needs the number of rows searched. Counting a campaign's 200,000 utterances or
-- passages took 20-30 ms a search at reference scale, so the counts are kept here,
-- maintained once per statement (not per row) from the statement's transition table.
CREATE TABLE campaign_row_counts (
    campaign_id text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    table_name  text NOT NULL CHECK (table_name IN ('chunks', 'session_entries')),
    row_count   bigint NOT NULL CHECK (row_count >= 0),
    PRIMARY KEY (campaign_id, table_name)
);

INSERT INTO campaign_row_counts (campaign_id, table_name, row_count)
SELECT campaign_id, 'chunks', count(*) FROM chunks GROUP BY campaign_id
UNION ALL
SELECT campaign_id, 'session_entries', count(*) FROM session_entries GROUP BY campaign_id;

CREATE FUNCTION glyphoxa_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO campaign_row_counts AS c (campaign_id, table_name, row_count)
    SELECT campaign_id, TG_TABLE_NAME, count(*) FROM inserted_rows GROUP BY campaign_id
    ON CONFLICT (campaign_id, table_name) DO UPDATE SET row_count = c.row_count + EXCLUDED.row_count;
    RETURN NULL;
END
$$;

CREATE FUNCTION glyphoxa_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A campaign being deleted takes its counts with it (ON DELETE CASCADE), before or
    -- after this: then there is nothing left to update.
    UPDATE campaign_row_counts c SET row_count = c.row_count - d.removed
    FROM (SELECT campaign_id, count(*) AS removed FROM deleted_rows GROUP BY campaign_id) d
    WHERE c.campaign_id = d.campaign_id AND c.table_name = TG_TABLE_NAME;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_counted_in AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS inserted_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_count_inserted();
CREATE TRIGGER chunks_counted_out AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_count_deleted();
CREATE TRIGGER session_entries_counted_in AFTER INSERT ON session_entries
    REFERENCING NEW TABLE AS inserted_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_count_inserted();
CREATE TRIGGER session_entries_counted_out AFTER DELETE ON session_entries
    REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_count_deleted();
