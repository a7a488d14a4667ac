-- Which model made the database's vectors. Vectors of two models of the same width are
-- both accepted by the column but mean nothing to each other: a query embedded by another
-- model finds noise. The first process that embeds records its model; a different one is
-- refused. One row for the whole database (a small reference table: no campaign_id).
CREATE TABLE embedding_model (
    only_row     boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    model        text NOT NULL CHECK (btrim(model) <> ''),
    recorded_at  timestamptz NOT NULL DEFAULT now()
);
