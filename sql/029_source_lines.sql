-- The transcript line a fact or relationship was extracted from, as the model cited it
-- (pipeline/extraction.py), so the DM's desk shows that line instead of guessing one by
-- words. NULL when nobody cited one (the DM's own, an import, an uncited reading) or when
-- the line was forgotten (`transcript forget line:ID`, storage/deletion.py): the reference
-- goes with the line, the fact stays. Campaign to campaign, as every key (sql/022).

ALTER TABLE facts ADD COLUMN source_entry_id bigint,
    ADD CONSTRAINT facts_source_entry_fkey FOREIGN KEY (campaign_id, source_entry_id)
        REFERENCES session_entries (campaign_id, id) ON DELETE SET NULL (source_entry_id);
ALTER TABLE relationships ADD COLUMN source_entry_id bigint,
    ADD CONSTRAINT relationships_source_entry_fkey FOREIGN KEY (campaign_id, source_entry_id)
        REFERENCES session_entries (campaign_id, id) ON DELETE SET NULL (source_entry_id);

-- Forgetting a line finds the rows that cite it without reading the whole table.
CREATE INDEX facts_by_source_entry ON facts (campaign_id, source_entry_id)
    WHERE source_entry_id IS NOT NULL;
CREATE INDEX relationships_by_source_entry ON relationships (campaign_id, source_entry_id)
    WHERE source_entry_id IS NOT NULL;
