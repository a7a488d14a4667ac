-- Bearer tokens for the HTTP server: each grants one viewer of one campaign (an NPC, the DM,
-- or a recorder) up to a tier. Only a SHA-256 of the secret is kept: the secret is 32 random
-- bytes, so a slow hash would add nothing but latency to every request.
-- The key starts with campaign_id like every other table's, so a token is looked up by the
-- campaign its request path names.
CREATE TABLE access_tokens (
    campaign_id   text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    id            text NOT NULL CHECK (id ~ '^[0-9a-f]{12}$'),
    viewer        text NOT NULL CHECK (viewer IN ('npc', 'dm', 'recorder')),
    npc_id        text,
    max_tier      text CHECK (max_tier IN ('FAST', 'STANDARD', 'DEEP')),
    label         text CHECK (length(label) <= 200),
    secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    last_used_at  timestamptz,
    revoked_at    timestamptz,
    PRIMARY KEY (campaign_id, id),
    CONSTRAINT npc_tokens_name_their_npc CHECK ((viewer = 'npc') = (npc_id IS NOT NULL)),
    CONSTRAINT tokens_expire_after_creation CHECK (expires_at > created_at)
);

-- `token revoke ID` names no campaign; ids are random, so this stays unique in practice.
CREATE INDEX access_tokens_by_id ON access_tokens (id);
