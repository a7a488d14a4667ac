-- The lore library (`glyphoxa-mcp lore add|list|remove|pin|unpin`): the DM's documents
-- (Markdown, text, Foundry journal exports) cut into sections under their headings, found
-- by memory.search_facts by words and meaning beside the facts, and pinned to an NPC's hot
-- context. A document is secret or known to some NPCs exactly as a fact is
-- (glyphoxa_visible); its sections carry the same two columns, copied from it by the
-- triggers below, so that every read and the word statistics judge a section on its own row.
-- Every key leads with the campaign (sql/022, tests/db/test_distribution.py).

CREATE TABLE lore_documents (
    campaign_id  text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    id           text NOT NULL CHECK (glyphoxa_valid_key(id)),
    title        text NOT NULL CHECK (btrim(title) <> '' AND length(title) <= 200),
    source_kind  text NOT NULL CHECK (source_kind IN ('markdown', 'text', 'foundry')),
    -- The file it was added from, as the DM named it: what `lore list` shows.
    source_name  text NOT NULL CHECK (length(source_name) <= 4096),
    -- Of the file's text: adding the same file again changes nothing.
    checksum     text NOT NULL,
    secret       boolean NOT NULL DEFAULT false,
    known_by     text[] NOT NULL DEFAULT '{}',
    added_at     timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, id)
);

CREATE TABLE lore_sections (
    campaign_id  text NOT NULL,
    id           bigint GENERATED ALWAYS AS IDENTITY,
    document_id  text NOT NULL,
    -- Its place in the document; a long section is several rows under one heading.
    ordinal      integer NOT NULL CHECK (ordinal >= 0),
    -- The heading path ("Part > Chapter"); empty for text before any heading.
    heading      text NOT NULL CHECK (length(heading) <= 4000),
    text         text NOT NULL CHECK (btrim(text) <> '' AND length(text) <= 4000),
    embedding    vector({{EMBEDDING_DIM}}) NOT NULL,
    tsv          tsvector GENERATED ALWAYS AS (
                     to_tsvector('english', heading || E'\n' || text)
                 ) STORED,
    secret       boolean NOT NULL DEFAULT false,
    known_by     text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (campaign_id, id),
    UNIQUE (campaign_id, document_id, ordinal),
    FOREIGN KEY (campaign_id, document_id) REFERENCES lore_documents (campaign_id, id)
        ON DELETE CASCADE
);

CREATE INDEX lore_sections_embedding ON lore_sections USING hnsw (embedding vector_cosine_ops);
CREATE INDEX lore_sections_by_heading ON lore_sections (campaign_id, document_id, heading);

-- A section pinned to an NPC's hot context, by its heading: it stays pinned when the
-- document is added again with that heading still in it.
CREATE TABLE lore_pins (
    campaign_id  text NOT NULL,
    npc_id       text NOT NULL,
    document_id  text NOT NULL,
    heading      text NOT NULL,
    pinned_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, npc_id, document_id, heading),
    FOREIGN KEY (campaign_id, document_id) REFERENCES lore_documents (campaign_id, id)
        ON DELETE CASCADE,
    FOREIGN KEY (campaign_id, npc_id) REFERENCES entities (campaign_id, id) ON DELETE CASCADE
);

CREATE INDEX lore_pins_by_document ON lore_pins (campaign_id, document_id);

-- A section is as secret as its document, from the moment it is written.
CREATE FUNCTION glyphoxa_lore_section_visibility() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT d.secret, d.known_by INTO NEW.secret, NEW.known_by
    FROM lore_documents d WHERE d.campaign_id = NEW.campaign_id AND d.id = NEW.document_id;
    RETURN NEW;
END
$$;

CREATE TRIGGER lore_sections_visibility BEFORE INSERT ON lore_sections
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_lore_section_visibility();

CREATE FUNCTION glyphoxa_lore_document_visibility() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE lore_sections SET secret = NEW.secret, known_by = NEW.known_by
    WHERE campaign_id = NEW.campaign_id AND document_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER lore_documents_visibility AFTER UPDATE OF secret, known_by ON lore_documents
    FOR EACH ROW
    WHEN (OLD.secret IS DISTINCT FROM NEW.secret OR OLD.known_by IS DISTINCT FROM NEW.known_by)
    EXECUTE FUNCTION glyphoxa_lore_document_visibility();

-- A deleted NPC's id must not linger in a document's known_by, or a new entity reusing the
-- id would inherit its secrets (as storage/knowledge_graph.py does for the graph's rows).
-- A campaign being deleted takes its documents with it: nothing to update then.
CREATE FUNCTION glyphoxa_lore_forget_knowers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE lore_documents d SET known_by = array_remove(d.known_by, gone.id)
    FROM deleted_rows gone
    WHERE d.campaign_id = gone.campaign_id AND gone.id = ANY(d.known_by)
      AND EXISTS (SELECT FROM campaigns c WHERE c.id = gone.campaign_id);
    RETURN NULL;
END
$$;

CREATE TRIGGER entities_forgotten_by_lore AFTER DELETE ON entities
    REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_lore_forget_knowers();

-- Lore is knowledge: a change moves the campaign's knowledge counter (sql/015), so an NPC's
-- hot context with its pinned sections is built again, and tells subscribers (sql/002).
CREATE TRIGGER lore_documents_knowledge_insert AFTER INSERT ON lore_documents
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER lore_documents_knowledge_update AFTER UPDATE ON lore_documents
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER lore_documents_knowledge_delete AFTER DELETE ON lore_documents
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER lore_sections_knowledge_insert AFTER INSERT ON lore_sections
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER lore_sections_knowledge_delete AFTER DELETE ON lore_sections
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER lore_pins_knowledge_insert AFTER INSERT ON lore_pins
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();
CREATE TRIGGER lore_pins_knowledge_delete AFTER DELETE ON lore_pins
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_bump_knowledge_version();

CREATE TRIGGER lore_documents_notify_insert AFTER INSERT ON lore_documents
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER lore_documents_notify_update AFTER UPDATE ON lore_documents
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER lore_documents_notify_delete AFTER DELETE ON lore_documents
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER lore_pins_notify_insert AFTER INSERT ON lore_pins
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_graph();
CREATE TRIGGER lore_pins_notify_delete AFTER DELETE ON lore_pins
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_notify_graph();

-- The sections' words, kept like those of the other searched tables (sql/024), as the
-- collection 'l'. Statistics count only sections every viewer may read: a score tells no
-- one how often a secret document uses a word.
ALTER TABLE word_collections DROP CONSTRAINT word_collections_collection_check;
ALTER TABLE word_collections ADD CONSTRAINT word_collections_collection_check
    CHECK (collection IN ('e', 'c', 'f', 'l'));

-- A section runs to a few hundred words: about 80 distinct lexemes.
CREATE OR REPLACE FUNCTION glyphoxa_reference_length(collection "char")
RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE $1 WHEN 'e' THEN 8 WHEN 'c' THEN 20 WHEN 'l' THEN 80 ELSE 7 END::float8 $$;

CREATE TRIGGER lore_sections_words_in AFTER INSERT ON lore_sections
    REFERENCING NEW TABLE AS moved_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_moved_words(
        'l', 'glyphoxa_visible(r.secret, r.known_by, ''''::text)');
CREATE TRIGGER lore_sections_words_out AFTER DELETE ON lore_sections
    REFERENCING OLD TABLE AS moved_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_moved_words(
        'l', 'glyphoxa_visible(r.secret, r.known_by, ''''::text)');
CREATE TRIGGER lore_sections_words_changed AFTER UPDATE ON lore_sections
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_updated_words(
        'l', 'glyphoxa_visible(r.secret, r.known_by, ''''::text)');
