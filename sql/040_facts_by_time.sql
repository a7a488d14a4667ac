-- Facts found by when they happened: a search for what happened after story day 400 or
-- before a real date ranks the facts of that span by meaning. The vector index cannot
-- narrow to a span, and with one that holds few facts it read thousands of entries to
-- find them (60-260 ms for an NPC on the reference dataset); through these, the span's
-- facts are read directly and ranked exactly (storage/fact_queries.py, FEW_NARROWED).
CREATE INDEX facts_by_story_day ON facts (campaign_id, story_day);
CREATE INDEX facts_by_occurred_at ON facts (campaign_id, occurred_at);
