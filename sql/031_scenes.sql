-- Scenes (issue 30): a session is a sequence of scenes, each a span of its time with a
-- location and the NPCs present (players are always present, and are not listed). A line
-- belongs to the scene that started last at or before it was spoken; lines before a
-- session's first scene belong to none. Campaign to campaign, as every key (sql/022).
CREATE TABLE scenes (
    campaign_id  text NOT NULL,
    session_id   text NOT NULL,
    started_at   timestamptz NOT NULL,
    location_id  text,
    present      text[] NOT NULL DEFAULT '{}',
    title        text CHECK (title IS NULL OR btrim(title) <> ''),
    PRIMARY KEY (campaign_id, session_id, started_at),
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE,
    FOREIGN KEY (campaign_id, location_id) REFERENCES entities (campaign_id, id)
        ON DELETE SET NULL (location_id)
);

-- An NPC deleted or forgotten is no longer named present anywhere, whichever path deletes it.
CREATE FUNCTION glyphoxa_unpresent_deleted_entity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE scenes SET present = array_remove(present, OLD.id)
    WHERE campaign_id = OLD.campaign_id AND present @> ARRAY[OLD.id];
    RETURN NULL;
END $$;

CREATE TRIGGER entities_unpresent AFTER DELETE ON entities
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_unpresent_deleted_entity();
