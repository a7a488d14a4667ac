-- Every key carries the campaign, so the tables can be sharded by campaign (Citus, with
-- campaign_id as the distribution column: docs/scaling.md). A primary key or unique
-- constraint is only enforceable on one shard when it holds the distribution column, and a
-- foreign key between sharded tables only when it matches campaign to campaign.
-- tests/db/test_distribution.py reads the catalog and checks these rules.
-- The ids stay unique on their own (an identity column never repeats); the wider key is what
-- a shard can check. Every statement names its campaign, so lookups use the new keys.

-- A retcon's link to the version that replaced it stays within the campaign.
ALTER TABLE facts DROP CONSTRAINT facts_superseded_by_fkey;

ALTER TABLE session_entries DROP CONSTRAINT session_entries_pkey,
    ADD CONSTRAINT session_entries_pkey PRIMARY KEY (campaign_id, id);
ALTER TABLE chunks DROP CONSTRAINT chunks_pkey,
    ADD CONSTRAINT chunks_pkey PRIMARY KEY (campaign_id, id);
ALTER TABLE relationships DROP CONSTRAINT relationships_pkey,
    ADD CONSTRAINT relationships_pkey PRIMARY KEY (campaign_id, id);
ALTER TABLE facts DROP CONSTRAINT facts_pkey,
    ADD CONSTRAINT facts_pkey PRIMARY KEY (campaign_id, id);
ALTER TABLE pending_entities DROP CONSTRAINT pending_entities_pkey,
    ADD CONSTRAINT pending_entities_pkey PRIMARY KEY (campaign_id, id);

ALTER TABLE facts ADD CONSTRAINT facts_superseded_by_fkey
    FOREIGN KEY (campaign_id, superseded_by) REFERENCES facts (campaign_id, id);
