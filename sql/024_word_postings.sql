-- The word ranking read every row holding a query word and scored it at query time (about
-- 10 µs a row: 450 ms for a word in 40,000 passages). Each searched table now keeps, per
-- campaign, postings ordered by their BM25 term weight, so that a search reads the best few
-- of each query word's list and stops as soon as no unread row can reach its top k
-- (storage/word_ranking.py), and the statistics BM25 needs, maintained on write.
--
-- A posting's order key ("impact") is its BM25 term weight for a reference average length,
-- fixed per campaign and table; a search scores with the current average length, and knows
-- how far that can move a weight (glyphoxa_bm25_bound). Statistics count only what any
-- viewer may read (no DM-only lines, secret facts or superseded facts), so that a score
-- tells no one how often a hidden text uses a word.
--
-- Collections: 'e' session_entries, 'c' chunks, 'f' facts. No foreign keys: checking one
-- for each of millions of postings would double a load's time; rows leave with their
-- source rows (triggers below) or their campaign (glyphoxa_campaign_words_deleted).

CREATE TABLE word_collections (
    campaign_id      text NOT NULL,
    collection       "char" NOT NULL CHECK (collection IN ('e', 'c', 'f')),
    documents        bigint NOT NULL CHECK (documents >= 0),
    total_length     bigint NOT NULL CHECK (total_length >= 0),
    reference_length float8 NOT NULL CHECK (reference_length > 0),
    PRIMARY KEY (campaign_id, collection)
);

CREATE TABLE word_frequencies (
    campaign_id text NOT NULL,
    collection  "char" NOT NULL,
    lexeme      text NOT NULL,
    documents   bigint NOT NULL CHECK (documents >= 0),
    PRIMARY KEY (campaign_id, collection, lexeme)
);

CREATE TABLE word_postings (
    campaign_id text NOT NULL,
    collection  "char" NOT NULL,
    lexeme      text NOT NULL,
    impact      real NOT NULL,
    row_id      bigint NOT NULL,
    frequency   smallint NOT NULL CHECK (frequency > 0),
    length      integer NOT NULL CHECK (length > 0),
    -- Read best first and index-only: a word's postings, highest impact first.
    PRIMARY KEY (campaign_id, collection, lexeme, impact, row_id) INCLUDE (frequency, length)
);

-- BM25's term weight (k1 = 1.2, b = 0.75) of a word found `frequency` times in a row of
-- `length` distinct lexemes, when rows average `average_length`.
-- (In float8 throughout: numeric arithmetic made scoring three times slower.)
CREATE FUNCTION glyphoxa_bm25_weight(frequency float8, length float8, average_length float8)
RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT $1 * 2.2::float8 / ($1 + 1.2::float8 * (0.25::float8 + 0.75::float8 * $2 / $3)) $$;

-- The most a posting of impact at most `impact` (its weight for the reference length) can
-- weigh now, when the reference length is `ratio` times the average: any frequency, any
-- length. Solving the weight for the length and putting it back with the new average:
-- above 1 the bound is a frequency of 1's (the weight falls with the frequency), below 1 a
-- frequency without end's (it rises).
CREATE FUNCTION glyphoxa_bm25_bound(impact float8, ratio float8)
RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE
    WHEN $2 < 1 THEN 2.2::float8 / (1 + $2 * (2.2::float8 / $1 - 1))
    WHEN 2.2::float8 / $1 >= 1.3::float8 THEN 2.2::float8 / (1.3::float8 + $2 * (2.2::float8 / $1 - 1.3::float8))
    ELSE $1
END $$;

-- A word's inverse document frequency among `documents` rows, `holding` of which hold it.
CREATE FUNCTION glyphoxa_bm25_idf(documents float8, holding float8)
RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ln(1 + greatest($1 - $2 + 0.5, 0.5) / ($2 + 0.5)) $$;

-- Typical lengths in distinct lexemes (an utterance, a passage of several, a fact): the
-- reference a new campaign's impacts are computed with.
CREATE FUNCTION glyphoxa_reference_length(collection "char")
RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE $1 WHEN 'e' THEN 8 WHEN 'c' THEN 20 ELSE 7 END::float8 $$;

CREATE TYPE glyphoxa_word_row AS (campaign_id text, id bigint, tsv tsvector, counted boolean);

CREATE FUNCTION glyphoxa_words_add(of_collection "char", added glyphoxa_word_row[])
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
        (campaign_id, collection, lexeme, impact, row_id, frequency, length)
    SELECT r.campaign_id, of_collection, t.lexeme,
           glyphoxa_bm25_weight(t.frequency, length(r.tsv), w.reference_length)::real,
           r.id, t.frequency, length(r.tsv)
    FROM unnest(added) r
         JOIN word_collections w
           ON w.campaign_id = r.campaign_id AND w.collection = of_collection,
         LATERAL (SELECT u.lexeme, least(coalesce(array_length(u.positions, 1), 1), 32767)
                  FROM unnest(r.tsv) u) t(lexeme, frequency)
    WHERE length(r.tsv) > 0
    -- In index order: a load's millions of postings then fill the index's pages instead of
    -- splitting them (the reference campaign's index is 275 MB so, 430 MB in any order).
    ORDER BY 1, 2, 3, 4, 5;
END
$$;

CREATE FUNCTION glyphoxa_words_remove(of_collection "char", removed glyphoxa_word_row[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- A campaign being deleted takes all its words at once (see below), whatever the order
    -- in which its rows go.
    removed := array(SELECT r FROM unnest(removed) r
                     WHERE EXISTS (SELECT FROM campaigns c WHERE c.id = r.campaign_id));
    IF cardinality(removed) = 0 THEN
        RETURN;
    END IF;
    UPDATE word_collections w
    SET documents = w.documents - g.documents, total_length = w.total_length - g.total_length
    FROM (SELECT r.campaign_id, count(*) AS documents, sum(length(r.tsv)) AS total_length
          FROM unnest(removed) r WHERE r.counted GROUP BY r.campaign_id) g
    WHERE w.campaign_id = g.campaign_id AND w.collection = of_collection;
    UPDATE word_frequencies f SET documents = f.documents - g.documents
    FROM (SELECT r.campaign_id, t.lexeme, count(*) AS documents
          FROM unnest(removed) r, unnest(r.tsv) t WHERE r.counted
          GROUP BY r.campaign_id, t.lexeme ORDER BY r.campaign_id, t.lexeme) g
    WHERE f.campaign_id = g.campaign_id AND f.collection = of_collection
      AND f.lexeme = g.lexeme;
    DELETE FROM word_frequencies f
    USING (SELECT DISTINCT r.campaign_id, t.lexeme
           FROM unnest(removed) r, unnest(r.tsv) t WHERE r.counted) g
    WHERE f.campaign_id = g.campaign_id AND f.collection = of_collection
      AND f.lexeme = g.lexeme AND f.documents = 0;
    -- The impact is computed again from what it was computed from, to find each posting by
    -- its whole key rather than among all postings of its word.
    DELETE FROM word_postings p
    USING unnest(removed) r
          JOIN word_collections w
            ON w.campaign_id = r.campaign_id AND w.collection = of_collection,
          LATERAL (SELECT u.lexeme, least(coalesce(array_length(u.positions, 1), 1), 32767)
                   FROM unnest(r.tsv) u) t(lexeme, frequency)
    WHERE p.campaign_id = r.campaign_id AND p.collection = of_collection
      AND p.lexeme = t.lexeme AND p.row_id = r.id
      AND p.impact = glyphoxa_bm25_weight(t.frequency, length(r.tsv), w.reference_length)::real;
END
$$;

-- Rows inserted or deleted (the statement's rows as `moved_rows`). TG_ARGV: the
-- collection, and the condition under which a row counts in the statistics.
CREATE FUNCTION glyphoxa_rows_moved_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format(
        'SELECT %s($1, array(SELECT (r.campaign_id, r.id, r.tsv, %s)::glyphoxa_word_row'
        ' FROM moved_rows r))',
        CASE TG_OP WHEN 'INSERT' THEN 'glyphoxa_words_add' ELSE 'glyphoxa_words_remove' END,
        TG_ARGV[1])
    USING TG_ARGV[0]::"char";
    RETURN NULL;
END
$$;

-- An update (a batch of corrections, lines made DM-only, a fact made secret or retconned)
-- moves the rows whose words, or whether they count, changed: all of them in one call.
CREATE FUNCTION glyphoxa_rows_updated_words() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    removed glyphoxa_word_row[];
    added glyphoxa_word_row[];
BEGIN
    EXECUTE format(
        'WITH before AS (SELECT r.campaign_id, r.id, r.tsv, (%1$s) AS counted FROM old_rows r),'
        ' after AS (SELECT r.campaign_id, r.id, r.tsv, (%1$s) AS counted FROM new_rows r),'
        ' changed AS (SELECT b.campaign_id, b.id, b.tsv, b.counted,'
        '                    a.tsv AS new_tsv, a.counted AS new_counted'
        '             FROM before b JOIN after a USING (campaign_id, id)'
        '             WHERE b.tsv IS DISTINCT FROM a.tsv OR b.counted <> a.counted)'
        ' SELECT array(SELECT (campaign_id, id, tsv, counted)::glyphoxa_word_row'
        '              FROM changed),'
        '        array(SELECT (campaign_id, id, new_tsv, new_counted)::glyphoxa_word_row'
        '              FROM changed)', TG_ARGV[1])
    INTO removed, added;
    IF cardinality(removed) > 0 THEN
        PERFORM glyphoxa_words_remove(TG_ARGV[0]::"char", removed);
        PERFORM glyphoxa_words_add(TG_ARGV[0]::"char", added);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER session_entries_words_in AFTER INSERT ON session_entries
    REFERENCING NEW TABLE AS moved_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_moved_words('e', 'NOT r.dm_only');
CREATE TRIGGER session_entries_words_out AFTER DELETE ON session_entries
    REFERENCING OLD TABLE AS moved_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_moved_words('e', 'NOT r.dm_only');
CREATE TRIGGER session_entries_words_changed AFTER UPDATE ON session_entries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_updated_words('e', 'NOT r.dm_only');

CREATE TRIGGER chunks_words_in AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS moved_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_moved_words('c', 'NOT r.dm_only');
CREATE TRIGGER chunks_words_out AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS moved_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_moved_words('c', 'NOT r.dm_only');
CREATE TRIGGER chunks_words_changed AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_updated_words('c', 'NOT r.dm_only');

CREATE TRIGGER facts_words_in AFTER INSERT ON facts
    REFERENCING NEW TABLE AS moved_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_moved_words(
        'f', 'r.superseded_by IS NULL AND glyphoxa_visible(r.secret, r.known_by, ''''::text)');
CREATE TRIGGER facts_words_out AFTER DELETE ON facts
    REFERENCING OLD TABLE AS moved_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_moved_words(
        'f', 'r.superseded_by IS NULL AND glyphoxa_visible(r.secret, r.known_by, ''''::text)');
CREATE TRIGGER facts_words_changed AFTER UPDATE ON facts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_rows_updated_words(
        'f', 'r.superseded_by IS NULL AND glyphoxa_visible(r.secret, r.known_by, ''''::text)');

CREATE FUNCTION glyphoxa_campaign_words_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM word_postings p USING deleted_rows d WHERE p.campaign_id = d.id;
    DELETE FROM word_frequencies f USING deleted_rows d WHERE f.campaign_id = d.id;
    DELETE FROM word_collections w USING deleted_rows d WHERE w.campaign_id = d.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER campaigns_words_out AFTER DELETE ON campaigns
    REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT
    EXECUTE FUNCTION glyphoxa_campaign_words_deleted();

-- What is stored already, in the index's order of collections ('c' < 'e' < 'f').
SELECT glyphoxa_words_add('c', array_agg((campaign_id, id, tsv, NOT dm_only)::glyphoxa_word_row))
FROM chunks GROUP BY campaign_id;
SELECT glyphoxa_words_add('e', array_agg((campaign_id, id, tsv, NOT dm_only)::glyphoxa_word_row))
FROM session_entries GROUP BY campaign_id;
SELECT glyphoxa_words_add('f', array_agg(
    (campaign_id, id, tsv, superseded_by IS NULL AND glyphoxa_visible(secret, known_by, ''))
    ::glyphoxa_word_row))
FROM facts GROUP BY campaign_id;
