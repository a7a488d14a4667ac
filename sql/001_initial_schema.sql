-- The three memory layers, every row scoped by campaign.
-- {{EMBEDDING_DIM}} is replaced by the configured dimension when this file is first applied;
-- from then on the column types are the record of it.

CREATE EXTENSION IF NOT EXISTS vector;

-- Ids people type (campaign slugs, session ids, entity ids): no spaces, no control characters.
CREATE FUNCTION glyphoxa_valid_key(key text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT key ~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$' $$;

-- Visibility: the DM (npc_id NULL) sees everything; an NPC sees what names it in known_by,
-- and what is neither secret nor restricted to a list of NPCs.
CREATE FUNCTION glyphoxa_visible(secret boolean, known_by text[], npc_id text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT $3 IS NULL OR $3 = ANY($2) OR (NOT $1 AND cardinality($2) = 0) $$;

-- Provenance of a relationship or fact: lower-case keys, confidence in [0, 1].
CREATE FUNCTION glyphoxa_valid_provenance(provenance jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(provenance) <> 'object' THEN false
        WHEN jsonb_typeof(provenance -> 'confidence') <> 'number' THEN false
        WHEN (provenance ->> 'confidence')::numeric NOT BETWEEN 0 AND 1 THEN false
        WHEN jsonb_typeof(provenance -> 'dm_confirmed') <> 'boolean' THEN false
        ELSE provenance ->> 'source' IN ('stated', 'inferred', 'dm', 'import')
    END
$$;

CREATE TABLE campaigns (
    id          text PRIMARY KEY CHECK (glyphoxa_valid_key(id)),
    name        text NOT NULL CHECK (btrim(name) <> ''),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
    campaign_id     text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    id              text NOT NULL CHECK (glyphoxa_valid_key(id)),
    title           text,
    started_at      timestamptz,
    ended_at        timestamptz,
    summary         text,
    summary_source  text CHECK (summary_source IN ('llm', 'extractive', 'dm')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, id),
    CONSTRAINT session_ends_after_it_starts CHECK (ended_at >= started_at),
    CONSTRAINT summary_has_a_source CHECK ((summary IS NULL) = (summary_source IS NULL))
);

CREATE INDEX sessions_by_end ON sessions (campaign_id, ended_at DESC);

-- L1: the verbatim session log.
CREATE TABLE session_entries (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id   text NOT NULL,
    session_id    text NOT NULL,
    -- Identifies an utterance across re-ingestion, so the same line is never stored twice.
    source_key    text NOT NULL,
    speaker_id    text NOT NULL CHECK (btrim(speaker_id) <> ''),
    speaker_name  text NOT NULL CHECK (btrim(speaker_name) <> ''),
    text          text NOT NULL,
    raw_text      text NOT NULL,
    npc_id        text,
    spoken_at     timestamptz NOT NULL,
    duration_ms   integer CHECK (duration_ms >= 0),
    tsv           tsvector GENERATED ALWAYS AS (
                      setweight(to_tsvector('english', text), 'A')
                      || setweight(to_tsvector('english', speaker_name), 'D')
                  ) STORED,
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE,
    UNIQUE (campaign_id, session_id, source_key)
);

CREATE INDEX session_entries_timeline ON session_entries (campaign_id, session_id, spoken_at);
CREATE INDEX session_entries_by_time ON session_entries (campaign_id, spoken_at);
CREATE INDEX session_entries_tsv ON session_entries USING gin (tsv);

-- L2: the semantic index.
CREATE TABLE chunks (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id   text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    session_id    text,
    content       text NOT NULL CHECK (btrim(content) <> ''),
    content_hash  bytea NOT NULL,
    embedding     vector({{EMBEDDING_DIM}}) NOT NULL,
    speaker_ids   text[] NOT NULL DEFAULT '{}',
    npc_ids       text[] NOT NULL DEFAULT '{}',
    entity_ids    text[] NOT NULL DEFAULT '{}',
    topics        text[] NOT NULL DEFAULT '{}',
    started_at    timestamptz,
    ended_at      timestamptz,
    entry_ids     bigint[] NOT NULL DEFAULT '{}',
    tsv           tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
    created_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE,
    UNIQUE (campaign_id, content_hash),
    CONSTRAINT chunk_ends_after_it_starts CHECK (ended_at >= started_at)
);

CREATE INDEX chunks_embedding ON chunks USING hnsw (embedding vector_cosine_ops);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_entity_ids ON chunks USING gin (entity_ids);
CREATE INDEX chunks_timeline ON chunks (campaign_id, session_id, started_at);

-- L3: the knowledge graph.
CREATE TABLE entities (
    campaign_id  text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    id           text NOT NULL CHECK (glyphoxa_valid_key(id)),
    type         text NOT NULL CHECK (
                     type IN ('npc', 'player', 'location', 'item', 'faction', 'event', 'quest', 'concept')
                 ),
    name         text NOT NULL CHECK (btrim(name) <> ''),
    aliases      text[] NOT NULL DEFAULT '{}',
    attributes   jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(attributes) = 'object'),
    secret       boolean NOT NULL DEFAULT false,
    known_by     text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, id)
);

CREATE INDEX entities_by_type ON entities (campaign_id, type);
CREATE INDEX entities_by_name ON entities (campaign_id, lower(name));

CREATE TABLE relationships (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id  text NOT NULL,
    source_id    text NOT NULL,
    target_id    text NOT NULL,
    rel_type     text NOT NULL CHECK (rel_type ~ '^[A-Z][A-Z0-9_]{0,63}$'),
    attributes   jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(attributes) = 'object'),
    provenance   jsonb NOT NULL CHECK (glyphoxa_valid_provenance(provenance)),
    secret       boolean NOT NULL DEFAULT false,
    known_by     text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (campaign_id, source_id) REFERENCES entities (campaign_id, id) ON DELETE CASCADE,
    FOREIGN KEY (campaign_id, target_id) REFERENCES entities (campaign_id, id) ON DELETE CASCADE,
    UNIQUE (campaign_id, source_id, target_id, rel_type),
    CONSTRAINT relationship_links_two_entities CHECK (source_id <> target_id)
);

CREATE INDEX relationships_by_target ON relationships (campaign_id, target_id);

CREATE TABLE facts (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id    text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    subject_id     text,
    text           text NOT NULL CHECK (btrim(text) <> ''),
    session_id     text,
    -- When it happened in the story: a day count on the campaign's own calendar, plus its label.
    story_day      numeric,
    story_label    text,
    -- When it happened in real time (at the table).
    occurred_at    timestamptz,
    provenance     jsonb NOT NULL CHECK (glyphoxa_valid_provenance(provenance)),
    embedding      vector({{EMBEDDING_DIM}}),
    tsv            tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    secret         boolean NOT NULL DEFAULT false,
    known_by       text[] NOT NULL DEFAULT '{}',
    -- A retconned fact is kept as history and points at the version that replaced it.
    superseded_by  bigint REFERENCES facts (id),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (campaign_id, subject_id) REFERENCES entities (campaign_id, id) ON DELETE CASCADE,
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id)
        ON DELETE SET NULL (session_id)
);

CREATE UNIQUE INDEX facts_current_identity
    ON facts (campaign_id, coalesce(subject_id, ''), md5(text))
    WHERE superseded_by IS NULL;
CREATE INDEX facts_by_subject ON facts (campaign_id, subject_id);
CREATE INDEX facts_tsv ON facts USING gin (tsv);
CREATE INDEX facts_embedding ON facts USING hnsw (embedding vector_cosine_ops);
