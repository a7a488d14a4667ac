-- The rumour rule's threshold is the campaign's own: below it, what was extracted or claimed
-- is a rumour until the DM confirms it. A campaign whose players' claims are usually reliable
-- can lower it; one full of liars can raise it.
ALTER TABLE campaigns
    ADD COLUMN review_threshold double precision NOT NULL DEFAULT 0.7
    CONSTRAINT review_threshold_is_a_confidence CHECK (review_threshold BETWEEN 0 AND 1);
