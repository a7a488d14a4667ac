-- Who may read a line or passage, kept on its word postings, so that the word ranking reads
-- an NPC's own postings rather than every posting and then drops most of the rows it found.
-- In a witnessed campaign an NPC reads the lines of the scenes it was in (one in seven for
-- the reference dataset's measured NPC): the ranking's threshold came from rows it could not
-- read, so it read and scored far more than the companion that reads everything.
--
-- An audience is one (dm_only, heard_by) of the campaign's lines and passages; most share a
-- scene's. Numbered densely per campaign from 0, so that what one NPC may read of them is a
-- bit string, kept per NPC as audiences are numbered (word_readers), and a posting is
-- checked by one bit, in the index.
-- A row anyone may read (not DM-only, heard by everyone: every row of a shared campaign)
-- has none: its postings' audience is NULL. An audience never changes once numbered; a row
-- heard by others moves to another one.
--
-- The bit is a shortcut, not the rule: the ranking still checks glyphoxa_may_read on every
-- row it returns, so a posting with a stale audience could only cost a row, never show one.

CREATE TABLE word_audiences (
    campaign_id text NOT NULL,
    id          integer NOT NULL CHECK (id >= 0),
    dm_only     boolean NOT NULL,
    heard_by    text[],
    PRIMARY KEY (campaign_id, id),
    CHECK (dm_only OR heard_by IS NOT NULL)
);
CREATE UNIQUE INDEX word_audiences_by_hearing
    ON word_audiences (campaign_id, dm_only, heard_by) NULLS NOT DISTINCT;

-- The audiences an NPC may read, as bits by number. Only the NPCs an audience names can
-- read it (glyphoxa_may_read: a row heard by a list is read by those on it), so numbering
-- one sets its bit for them alone, each checked by the rule. An NPC without a row reads
-- none but the rows anyone may read.
CREATE TABLE word_readers (
    campaign_id text NOT NULL,
    npc_id      text NOT NULL,
    audiences   varbit NOT NULL,
    PRIMARY KEY (campaign_id, npc_id)
);

-- `bits` with bit `n` set, lengthened as needed.
CREATE FUNCTION glyphoxa_with_bit(bits varbit, n integer) RETURNS varbit
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT set_bit(CASE WHEN length($1) > $2 THEN $1
                          ELSE $1 || repeat('0', $2 + 1 - length($1))::varbit END, $2, 1) $$;

-- The NPCs who may read the campaign's audience `numbered` are given its bit.
CREATE FUNCTION glyphoxa_audience_readers(campaign text, numbered integer)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO word_readers AS r (campaign_id, npc_id, audiences)
    SELECT a.campaign_id, h.npc_id, glyphoxa_with_bit(''::varbit, a.id)
    FROM word_audiences a, unnest(a.heard_by) h(npc_id)
    WHERE a.campaign_id = campaign AND a.id = numbered
      AND glyphoxa_may_read(a.dm_only, a.heard_by, h.npc_id)
    ON CONFLICT (campaign_id, npc_id)
        DO UPDATE SET audiences = glyphoxa_with_bit(r.audiences, numbered)
$$;

-- The audience of rows with this hearing, numbered on first use. Numbering takes a lock on
-- the campaign's audiences until the transaction ends, and only when a new one is needed:
-- a new scene or a new set of hearers, not a new line.
CREATE FUNCTION glyphoxa_audience(campaign text, only_dm boolean, hearers text[])
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    numbered integer;
BEGIN
    IF NOT only_dm AND hearers IS NULL THEN
        RETURN NULL;
    END IF;
    FOR attempt IN 1..2 LOOP
        IF hearers IS NULL THEN
            SELECT a.id INTO numbered FROM word_audiences a
            WHERE a.campaign_id = campaign AND a.dm_only = only_dm AND a.heard_by IS NULL;
        ELSE
            SELECT a.id INTO numbered FROM word_audiences a
            WHERE a.campaign_id = campaign AND a.dm_only = only_dm AND a.heard_by = hearers;
        END IF;
        IF numbered IS NOT NULL OR attempt = 2 THEN
            EXIT;
        END IF;
        -- Looked up again once the lock is held: another transaction may have numbered it.
        PERFORM pg_advisory_xact_lock(hashtext('glyphoxa_audiences'), hashtext(campaign));
    END LOOP;
    IF numbered IS NULL THEN
        INSERT INTO word_audiences (campaign_id, id, dm_only, heard_by)
        SELECT campaign, coalesce(max(a.id) + 1, 0), only_dm, hearers
        FROM word_audiences a WHERE a.campaign_id = campaign
        RETURNING id INTO numbered;
        PERFORM glyphoxa_audience_readers(campaign, numbered);
    END IF;
    RETURN numbered;
END
$$;

-- The audiences of these rows of the collection ('c' chunks, 'e' session entries; none for
-- the others), read from the rows as they are now rather than as a trigger's transition
-- table saw them: a line's hearers are worked out again after it is inserted (sql/032).
-- Rows anyone may read are left out.
CREATE FUNCTION glyphoxa_row_audiences(of_collection "char", of_rows glyphoxa_word_row[])
RETURNS TABLE (campaign_id text, id bigint, audience integer) LANGUAGE plpgsql AS $$
BEGIN
    IF of_collection NOT IN ('c', 'e') THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format($sql$
        WITH hearing AS MATERIALIZED (
            SELECT x.campaign_id, x.id, x.dm_only, x.heard_by
            FROM unnest($1) r JOIN %I x ON x.campaign_id = r.campaign_id AND x.id = r.id
            WHERE x.dm_only OR x.heard_by IS NOT NULL
        ),
        numbered AS MATERIALIZED (
            SELECT k.campaign_id, k.dm_only, k.heard_by,
                   glyphoxa_audience(k.campaign_id, k.dm_only, k.heard_by) AS audience
            FROM (SELECT DISTINCT h.campaign_id, h.dm_only, h.heard_by FROM hearing h) k
        )
        -- '{NULL}' is no one's hearers (a set holds no NULL): a key that joins by hash.
        SELECT h.campaign_id, h.id, n.audience
        FROM hearing h JOIN numbered n
          ON n.campaign_id = h.campaign_id AND n.dm_only = h.dm_only
         AND coalesce(n.heard_by, '{NULL}') = coalesce(h.heard_by, '{NULL}')
    $sql$, CASE of_collection WHEN 'c' THEN 'chunks' ELSE 'session_entries' END)
    USING of_rows;
END
$$;

-- What the NPC `reader` may read of the campaign's audiences, as bits by number.
CREATE FUNCTION glyphoxa_audience_mask(campaign text, reader text) RETURNS varbit
LANGUAGE sql STABLE
AS $$
    SELECT coalesce((SELECT r.audiences FROM word_readers r
                     WHERE r.campaign_id = campaign AND r.npc_id = reader), ''::varbit)
$$;

-- Whether a posting of this audience is one the mask lets be read.
CREATE FUNCTION glyphoxa_audience_heard(mask varbit, audience integer) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN $2 IS NULL THEN true
                  WHEN $2 >= length($1) THEN false
                  ELSE get_bit($1, $2) = 1 END $$;

-- The postings, made again with their audiences, in index order; the key now carries the
-- audience so that an index-only scan checks it.
INSERT INTO word_audiences (campaign_id, id, dm_only, heard_by)
SELECT k.campaign_id,
       (row_number() OVER (PARTITION BY k.campaign_id ORDER BY k.dm_only, k.heard_by) - 1)::integer,
       k.dm_only, k.heard_by
FROM (SELECT campaign_id, dm_only, heard_by FROM chunks WHERE dm_only OR heard_by IS NOT NULL
      UNION
      SELECT campaign_id, dm_only, heard_by FROM session_entries
      WHERE dm_only OR heard_by IS NOT NULL) k;

SELECT glyphoxa_audience_readers(a.campaign_id, a.id) FROM word_audiences a ORDER BY a.campaign_id, a.id;

-- Each row's audience first, counted, so that the postings find theirs by one hash join
-- (as a lookup per posting it took the reference campaign's 5 million postings hours).
CREATE TEMP TABLE heard_rows ON COMMIT DROP AS
SELECT 'c'::"char" AS collection, c.campaign_id, c.id AS row_id, a.id AS audience
FROM chunks c JOIN word_audiences a
  ON a.campaign_id = c.campaign_id AND a.dm_only = c.dm_only
 AND coalesce(a.heard_by, '{NULL}') = coalesce(c.heard_by, '{NULL}')
UNION ALL
SELECT 'e'::"char", e.campaign_id, e.id, a.id
FROM session_entries e JOIN word_audiences a
  ON a.campaign_id = e.campaign_id AND a.dm_only = e.dm_only
 AND coalesce(a.heard_by, '{NULL}') = coalesce(e.heard_by, '{NULL}');
ANALYZE heard_rows;

CREATE TABLE word_postings_heard (LIKE word_postings INCLUDING CONSTRAINTS INCLUDING DEFAULTS);
ALTER TABLE word_postings_heard ADD COLUMN audience integer;
INSERT INTO word_postings_heard
SELECT p.*, h.audience
FROM word_postings p
     LEFT JOIN heard_rows h
       ON h.campaign_id = p.campaign_id AND h.collection = p.collection AND h.row_id = p.row_id
ORDER BY p.campaign_id, p.collection, p.lexeme, p.impact, p.row_id;
DROP TABLE word_postings;
ALTER TABLE word_postings_heard RENAME TO word_postings;
-- vacuum after: word_postings
ALTER TABLE word_postings ADD CONSTRAINT word_postings_pkey
    PRIMARY KEY (campaign_id, collection, lexeme, impact, row_id)
    INCLUDE (frequency, length, audience);

-- The postings these rows of the collection make: one a lexeme, ordered by its BM25 weight
-- for the campaign's reference length, with the row's audience. What is inserted for new
-- rows, and how a row's postings are found again by their whole key.
CREATE FUNCTION glyphoxa_row_postings(of_collection "char", of_rows glyphoxa_word_row[])
RETURNS TABLE (campaign_id text, lexeme text, impact real, row_id bigint,
               frequency smallint, length integer, audience integer)
LANGUAGE sql AS $$
    SELECT r.campaign_id, t.lexeme,
           glyphoxa_bm25_weight(t.frequency, length(r.tsv), w.reference_length)::real,
           r.id, t.frequency, length(r.tsv), a.audience
    FROM unnest(of_rows) r
         JOIN word_collections w
           ON w.campaign_id = r.campaign_id AND w.collection = of_collection
         LEFT JOIN glyphoxa_row_audiences(of_collection, of_rows) a
           ON a.campaign_id = r.campaign_id AND a.id = r.id,
         LATERAL (SELECT u.lexeme,
                         least(coalesce(array_length(u.positions, 1), 1), 32767)::smallint
                  FROM unnest(r.tsv) u) t(lexeme, frequency)
    WHERE length(r.tsv) > 0
$$;

CREATE OR REPLACE FUNCTION glyphoxa_words_add(of_collection "char", added glyphoxa_word_row[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO word_collections AS w
        (campaign_id, collection, documents, total_length, reference_length)
    SELECT r.campaign_id, of_collection,
           count(*) FILTER (WHERE r.counted),
           coalesce(sum(length(r.tsv)) FILTER (WHERE r.counted), 0),
           glyphoxa_reference_length(of_collection)
    FROM unnest(added) r GROUP BY r.campaign_id
    ON CONFLICT (campaign_id, collection) DO UPDATE
        SET documents = w.documents + EXCLUDED.documents,
            total_length = w.total_length + EXCLUDED.total_length;
    -- In key order, so that two writers of one campaign queue rather than deadlock.
    INSERT INTO word_frequencies AS f (campaign_id, collection, lexeme, documents)
    SELECT r.campaign_id, of_collection, t.lexeme, count(*)
    FROM unnest(added) r, unnest(r.tsv) t
    WHERE r.counted
    GROUP BY r.campaign_id, t.lexeme
    ORDER BY r.campaign_id, t.lexeme
    ON CONFLICT (campaign_id, collection, lexeme) DO UPDATE
        SET documents = f.documents + EXCLUDED.documents;
    INSERT INTO word_postings
        (campaign_id, collection, lexeme, impact, row_id, frequency, length, audience)
    SELECT p.campaign_id, of_collection, p.lexeme, p.impact, p.row_id, p.frequency, p.length,
           p.audience
    FROM glyphoxa_row_postings(of_collection, added) p
    -- In index order: a load's millions of postings then fill the index's pages instead of
    -- splitting them.
    ORDER BY p.campaign_id, p.lexeme, p.impact, p.row_id;
END
$$;

-- Rows heard by others now, their words unchanged: their postings take the new audience,
-- each found by its whole key (its impact computed again, as when it is removed).
CREATE FUNCTION glyphoxa_words_heard_again(of_collection "char", changed glyphoxa_word_row[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE word_postings p SET audience = n.audience
    FROM glyphoxa_row_postings(of_collection, changed) n
    WHERE p.campaign_id = n.campaign_id AND p.collection = of_collection
      AND p.lexeme = n.lexeme AND p.impact = n.impact AND p.row_id = n.row_id
      AND p.audience IS DISTINCT FROM n.audience;
END
$$;

-- As before (sql/024), and rows whose hearing changed (TG_ARGV[2]: the expression of a row's
-- hearing, for the collections that have one) are heard again.
CREATE OR REPLACE FUNCTION glyphoxa_rows_updated_words() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    removed glyphoxa_word_row[];
    added glyphoxa_word_row[];
    reheard glyphoxa_word_row[];
BEGIN
    EXECUTE format(
        'WITH before AS (SELECT r.campaign_id, r.id, r.tsv, (%1$s) AS counted,'
        '                       (%2$s) AS hearing FROM old_rows r),'
        ' after AS (SELECT r.campaign_id, r.id, r.tsv, (%1$s) AS counted,'
        '                  (%2$s) AS hearing FROM new_rows r),'
        ' changed AS (SELECT b.campaign_id, b.id, b.tsv, b.counted,'
        '                    a.tsv AS new_tsv, a.counted AS new_counted,'
        '                    b.tsv IS DISTINCT FROM a.tsv OR b.counted <> a.counted AS moved'
        '             FROM before b JOIN after a USING (campaign_id, id)'
        '             WHERE b.tsv IS DISTINCT FROM a.tsv OR b.counted <> a.counted'
        '                OR b.hearing IS DISTINCT FROM a.hearing)'
        ' SELECT array(SELECT (campaign_id, id, tsv, counted)::glyphoxa_word_row'
        '              FROM changed WHERE moved),'
        '        array(SELECT (campaign_id, id, new_tsv, new_counted)::glyphoxa_word_row'
        '              FROM changed WHERE moved),'
        '        array(SELECT (campaign_id, id, new_tsv, new_counted)::glyphoxa_word_row'
        '              FROM changed WHERE NOT moved)',
        TG_ARGV[1], CASE WHEN TG_NARGS > 2 THEN TG_ARGV[2] ELSE 'NULL' END)
    INTO removed, added, reheard;
    IF cardinality(removed) > 0 THEN
        PERFORM glyphoxa_words_remove(TG_ARGV[0]::"char", removed);
        PERFORM glyphoxa_words_add(TG_ARGV[0]::"char", added);
    END IF;
    IF cardinality(reheard) > 0 THEN
        PERFORM glyphoxa_words_heard_again(TG_ARGV[0]::"char", reheard);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER session_entries_words_changed ON session_entries;
CREATE TRIGGER session_entries_words_changed AFTER UPDATE ON session_entries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_updated_words('e', 'NOT r.dm_only', 'r.heard_by');
DROP TRIGGER chunks_words_changed ON chunks;
CREATE TRIGGER chunks_words_changed AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_updated_words('c', 'NOT r.dm_only', 'r.heard_by');

CREATE OR REPLACE FUNCTION glyphoxa_campaign_words_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM word_postings p USING deleted_rows d WHERE p.campaign_id = d.id;
    DELETE FROM word_frequencies f USING deleted_rows d WHERE f.campaign_id = d.id;
    DELETE FROM word_collections w USING deleted_rows d WHERE w.campaign_id = d.id;
    DELETE FROM word_audiences a USING deleted_rows d WHERE a.campaign_id = d.id;
    DELETE FROM word_readers r USING deleted_rows d WHERE r.campaign_id = d.id;
    RETURN NULL;
END
$$;
