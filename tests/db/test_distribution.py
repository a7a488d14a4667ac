"""Our schema follows Citus's co-location rules, so it can be sharded by campaign (docs/scaling.md).

Read from PostgreSQL's own catalog on the migrated schema: every table is either distributed
by its campaign (its distribution column in its primary key, in every unique constraint and
unique index, and on both sides of every foreign key between distributed tables, matched
column to column) or a small reference table that names no campaign and refers to no
distributed table.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from glyphoxa_mcp.db.database import Database

# Each distributed table's distribution column. A campaign's own row is the one table whose
# column is `id`: distributed with its data (colocated), not copied to every node.
DISTRIBUTION_COLUMN = {"campaigns": "id"}
DEFAULT_DISTRIBUTION_COLUMN = "campaign_id"
# Small tables that belong to no campaign, copied to every node (create_reference_table).
REFERENCE_TABLES = {
    "glyphoxa_migrations": "one row per migration applied",
    "embedding_model": "one row for the whole database: the model that made its vectors",
}

SELECT_TABLES = """
SELECT c.oid, c.relname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
ORDER BY c.relname
"""
SELECT_COLUMNS = """
SELECT a.attrelid, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) AS type
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped
"""
# Primary keys, unique and exclusion constraints, foreign keys.
SELECT_CONSTRAINTS = """
SELECT con.conname, con.contype::text AS contype,
       con.conrelid, con.conkey, con.confrelid, con.confkey
FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace
WHERE n.nspname = 'public' AND con.contype IN ('p', 'u', 'x', 'f')
ORDER BY con.conname
"""
# Unique indexes made by CREATE UNIQUE INDEX rather than by a constraint. An expression's
# column number is 0: only plain columns count as holding the distribution column.
SELECT_UNIQUE_INDEXES = """
SELECT i.indexrelid::regclass::text AS name, i.indrelid, i.indkey::int2[] AS columns
FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND i.indisunique
  AND NOT EXISTS (
      SELECT FROM pg_constraint con
      WHERE con.conindid = i.indexrelid AND con.contype IN ('p', 'u', 'x')
  )
"""


@dataclass(frozen=True)
class Schema:
    tables: dict[int, str]
    columns: dict[tuple[int, int], str]
    types: dict[tuple[int, str], str]
    constraints: list[asyncpg.Record]
    unique_indexes: list[asyncpg.Record]

    def distribution_attnum(self, table: int) -> int | None:
        """The distribution column's number, None for a table without one."""
        wanted = DISTRIBUTION_COLUMN.get(self.tables[table], DEFAULT_DISTRIBUTION_COLUMN)
        for (relid, attnum), name in self.columns.items():
            if relid == table and name == wanted:
                return attnum
        return None

    def is_distributed(self, table: int) -> bool:
        return self.tables[table] not in REFERENCE_TABLES


async def read_schema(db: Database) -> Schema:
    async with db.pool.acquire() as conn:
        tables = {row["oid"]: row["relname"] for row in await conn.fetch(SELECT_TABLES)}
        columns = await conn.fetch(SELECT_COLUMNS)
        return Schema(
            tables,
            {(row["attrelid"], row["attnum"]): row["attname"] for row in columns},
            {(row["attrelid"], row["attname"]): row["type"] for row in columns},
            await conn.fetch(SELECT_CONSTRAINTS),
            await conn.fetch(SELECT_UNIQUE_INDEXES),
        )


def colocation_violations(schema: Schema) -> list[str]:
    """What would stop `create_distributed_table` / `create_reference_table`, one line each."""
    found: list[str] = []
    for oid, table in schema.tables.items():
        has_campaign = (oid, DEFAULT_DISTRIBUTION_COLUMN) in schema.types
        if table in REFERENCE_TABLES:
            if has_campaign:
                found.append(f"{table}: a reference table with campaign_id; distribute it")
        elif schema.distribution_attnum(oid) is None:
            found.append(f"{table}: no campaign_id; distribute it or list it as a reference table")
    primary_keys = {con["conrelid"] for con in schema.constraints if con["contype"] == "p"}
    for oid, table in schema.tables.items():
        if schema.is_distributed(oid) and oid not in primary_keys:
            found.append(f"{table}: no primary key")

    for con in schema.constraints:
        table, name = schema.tables[con["conrelid"]], con["conname"]
        if not schema.is_distributed(con["conrelid"]):
            if con["contype"] == "f" and schema.is_distributed(con["confrelid"]):
                target = schema.tables[con["confrelid"]]
                found.append(f"{table}.{name}: a reference table refers to distributed {target}")
            continue
        column = schema.distribution_attnum(con["conrelid"])
        if column is None:
            continue  # reported above
        if con["contype"] in ("p", "u", "x") and column not in con["conkey"]:
            kind = {"p": "primary key", "u": "unique constraint", "x": "exclusion constraint"}
            found.append(f"{table}.{name}: {kind[con['contype']]} without the campaign")
        if con["contype"] == "f" and schema.is_distributed(con["confrelid"]):
            target = con["confrelid"]
            pairs = list(zip(con["conkey"], con["confkey"], strict=True))
            if (column, schema.distribution_attnum(target)) not in pairs:
                found.append(
                    f"{table}.{name}: foreign key to {schema.tables[target]} does not match "
                    "campaign to campaign"
                )
    for index in schema.unique_indexes:
        relid, name = index["indrelid"], index["name"]
        column = schema.distribution_attnum(relid)
        if schema.is_distributed(relid) and column not in index["columns"]:
            found.append(f"{schema.tables[relid]}.{name}: unique index without the campaign")
    return found


async def test_every_table_is_distributed_by_campaign_or_a_small_reference_table(
    db: Database,
) -> None:
    assert colocation_violations(await read_schema(db)) == []


async def test_the_distribution_columns_share_one_type_so_the_tables_can_be_colocated(
    db: Database,
) -> None:
    schema = await read_schema(db)
    types = {
        table: schema.types[(oid, DISTRIBUTION_COLUMN.get(table, DEFAULT_DISTRIBUTION_COLUMN))]
        for oid, table in schema.tables.items()
        if schema.is_distributed(oid)
    }
    assert set(types.values()) == {"text"}, types
    assert set(REFERENCE_TABLES) <= set(schema.tables.values())


async def test_the_check_names_what_breaks_the_rules(db: Database) -> None:
    # The database is this test's own clone: what it adds is dropped with it.
    await db.pool.execute(
        "CREATE TABLE loose (id bigint PRIMARY KEY, campaign_id text NOT NULL,"
        " session_id text, code text UNIQUE,"
        " FOREIGN KEY (session_id, campaign_id) REFERENCES sessions (campaign_id, id));"
        "CREATE TABLE stray (note text PRIMARY KEY);"
        "CREATE UNIQUE INDEX loose_by_session ON loose (session_id)"
    )
    found = colocation_violations(await read_schema(db))
    assert [line for line in found if line.startswith(("loose", "stray"))] == [
        "stray: no campaign_id; distribute it or list it as a reference table",
        "loose.loose_code_key: unique constraint without the campaign",
        "loose.loose_pkey: primary key without the campaign",
        "loose.loose_session_id_campaign_id_fkey: foreign key to sessions does not match "
        "campaign to campaign",
        "loose.loose_by_session: unique index without the campaign",
    ]
