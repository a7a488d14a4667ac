-- Entities proposed by a VTT import, waiting for the DM's review. They are not part of the
-- graph (no NPC can see them) until confirmed; re-importing the same export updates the
-- proposal instead of adding another.
CREATE TABLE pending_entities (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    source      text NOT NULL CHECK (source IN ('foundry', 'roll20', 'csv')),
    source_ref  text NOT NULL,
    proposal    jsonb NOT NULL CHECK (jsonb_typeof(proposal) = 'object'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (campaign_id, source, source_ref)
);
