"""Campaign archives: everything stored for one campaign in one file, to keep, to move to
another machine or database, and to restore (`campaign export`, `campaign import`).

The format is documented in docs/reference/campaign-archive.md: gzip'd JSON Lines, a header
line (format, version, the schema's migration level, the model that made the vectors, every
table with its columns and row count), then one line per row, table by table in an order
that satisfies every foreign key, rows in primary-key order. Nothing in it depends on when
or where it was made, so exporting what an import restored gives the same bytes.

What is archived is read from the catalog, not listed here: every table that holds a
campaign's rows (the `campaigns` row and every table with a `campaign_id`) and every column
of it that is stored (generated columns are made again by the database). A table or column
added later is archived without a change here. Only two kinds of table are left out, each
named below with the reason: those the database derives from the others (made again by the
triggers of the imported rows, or counted again), and the access tokens.

Ids the database generates (identity columns) mean nothing outside it: the archive numbers
each table's rows 1, 2, ... in id order, and every reference to them (a foreign key to the
identity column, found in the catalog, or a list of ids named in `ID_ARRAYS`) is numbered
the same way. An import takes new ids from the database's own sequences in that order, so
it never collides with rows already there (`--as NEW` beside the original) and keeps the
order ids give.

An import is one transaction: the rows are staged (streamed into temporary tables, a batch
at a time, so memory stays bounded however large the campaign), then inserted table by
table with one statement each, which fires the triggers that derive the rest. Vectors are
kept when the database's embedding model is the archive's; otherwise they are made again:
passages' and lore sections' (which every row must have) while staged, facts' and
relationships' after the import, as `backfill-embeddings` does (desk/archive_actions.py).
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from pydantic import BaseModel, ConfigDict

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.db.embedding_model import check_embedding_model
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.errors import (
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    NotFoundError,
)
from glyphoxa_mcp.lore.sections import LoreSection, embedding_text
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.storage.forking import TALLY_PASSAGE_ENTITIES

FORMAT = "glyphoxa-campaign"
FORMAT_VERSION = 1

# Tables of a campaign that an archive does not carry, and why; every other table that
# holds a campaign's rows is archived (tests/storage/test_archive.py reads the catalog).
DERIVED_TABLES = {
    "word_postings": "made by the triggers of the imported rows (sql/024)",
    "word_frequencies": "made by the triggers of the imported rows (sql/024)",
    "word_collections": "made by the triggers of the imported rows (sql/024)",
    "word_audiences": "made by the triggers of the imported rows (sql/036)",
    "word_readers": "made by the triggers of the imported rows (sql/036)",
    "campaign_row_counts": "made by the triggers of the imported rows (sql/010)",
    "entity_versions": "the campaign's own counter, started by its row (sql/007, sql/026)",
    "knowledge_versions": "the campaign's own counter, started by its row (sql/015, sql/026)",
    "entity_changes": "the campaign's own log, written as its entities are inserted (sql/025)",
    "session_chunk_entities": "counted again from the imported passages (sql/011, sql/014)",
    "session_npcs": "made by the triggers of the imported lines (sql/032)",
    "names_read": "a cache, filled again as the imported texts are read (sql/039)",
}
LEFT_OUT_TABLES = {
    "access_tokens": "a token grants one campaign on one server: make new ones with "
    "`token create` where the campaign is imported",
}
# Lists of ids no foreign key declares: (table, column) -> the table whose ids they are.
ID_ARRAYS = {("chunks", "entry_ids"): "session_entries"}

# Rows per COPY while staging, and texts per embedder call when vectors are made again.
STAGE_BATCH = 500
EMBED_BATCH = 64
# Rows the export's cursor fetches at a time.
PREFETCH = 200

ARCHIVE_SUFFIX = ".glyphoxa.jsonl.gz"


class ArchiveSummary(BaseModel):
    """What an export wrote or an import restored."""

    model_config = ConfigDict(frozen=True)

    campaign_id: str
    rows: dict[str, int]
    embedding_model: str | None
    vectors_made_again: bool = False


# --- the catalog -------------------------------------------------------------------------

SELECT_COLUMNS = """
SELECT c.relname::text AS table_name, a.attname::text AS column_name,
       format_type(a.atttypid, a.atttypmod) AS column_type, t.typname::text AS base_type,
       a.attnotnull AS not_null, a.attidentity <> '' AS identity,
       a.attgenerated <> '' AS generated
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type t ON t.oid = a.atttypid
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
  AND (c.relname = 'campaigns' OR EXISTS (
      SELECT FROM pg_attribute k
      WHERE k.attrelid = c.oid AND k.attname = 'campaign_id' AND NOT k.attisdropped))
ORDER BY c.relname, a.attnum
"""
SELECT_PRIMARY_KEYS = """
SELECT c.relname::text AS table_name,
       array(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
             ORDER BY k.ord) AS columns
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE i.indisprimary AND n.nspname = current_schema()
"""
SELECT_FOREIGN_KEYS = """
SELECT c.relname::text AS table_name, f.relname::text AS referenced,
       array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.ord) AS columns,
       array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum
             ORDER BY k.ord) AS referenced_columns
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_class f ON f.oid = con.confrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE con.contype = 'f' AND n.nspname = current_schema()
ORDER BY con.conname
"""
SELECT_SCHEMA_LEVEL = "SELECT max(version) FROM glyphoxa_migrations"
SELECT_MODEL = "SELECT model FROM embedding_model"
RECORD_MODEL = "INSERT INTO embedding_model (model) VALUES ($1) ON CONFLICT (only_row) DO NOTHING"
SELECT_EXISTS = "SELECT EXISTS (SELECT FROM campaigns WHERE id = $1)"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    base_type: str
    not_null: bool
    identity: bool
    generated: bool


@dataclass(frozen=True)
class ArchivedTable:
    """One archived table as the catalog describes it."""

    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    references: Mapping[str, str] = field(default_factory=dict)
    """Columns holding another row's generated id (by foreign key): column -> its table."""
    id_arrays: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The column naming the campaign: a row's campaign is the archive's."""
        return "id" if self.name == "campaigns" else "campaign_id"

    @property
    def archived(self) -> tuple[Column, ...]:
        """The columns an archive row holds: the stored ones but the campaign's."""
        return tuple(c for c in self.columns if not c.generated and c.name != self.key)

    @property
    def identity(self) -> str | None:
        return next((c.name for c in self.columns if c.identity), None)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


@dataclass(frozen=True)
class CampaignSchema:
    """The tables holding a campaign's rows: those archived, in an order that satisfies
    every foreign key between them, and the names of all of them."""

    archived: tuple[ArchivedTable, ...]
    all_tables: frozenset[str]
    level: int

    def table(self, name: str) -> ArchivedTable | None:
        return next((t for t in self.archived if t.name == name), None)


def dependency_order(tables: Mapping[str, set[str]]) -> list[str]:
    """The tables, each after those it depends on (itself aside), ties by name. (pure)"""
    left = {name: {d for d in deps if d != name and d in tables} for name, deps in tables.items()}
    ordered: list[str] = []
    while left:
        ready = sorted(name for name, deps in left.items() if not deps)
        if not ready:
            raise ValueError(f"foreign keys in a cycle among {sorted(left)}")
        # `campaigns` first: every row of the others belongs to it.
        head = "campaigns" if "campaigns" in ready else ready[0]
        ordered.append(head)
        del left[head]
        for deps in left.values():
            deps.discard(head)
    return ordered


async def read_schema(conn: asyncpg.Connection) -> CampaignSchema:
    """The campaign tables of the database `conn` is connected to, from its catalog."""
    columns: dict[str, list[Column]] = {}
    for row in await conn.fetch(SELECT_COLUMNS):
        columns.setdefault(row["table_name"], []).append(
            Column(
                name=row["column_name"],
                type=row["column_type"],
                base_type=row["base_type"],
                not_null=row["not_null"],
                identity=row["identity"],
                generated=row["generated"],
            )
        )
    keys = {
        row["table_name"]: tuple(row["columns"]) for row in await conn.fetch(SELECT_PRIMARY_KEYS)
    }
    archived_names = {
        name for name in columns if name not in DERIVED_TABLES and name not in LEFT_OUT_TABLES
    }
    identity = {
        name: next((c.name for c in cols if c.identity), None) for name, cols in columns.items()
    }
    references: dict[str, dict[str, str]] = {name: {} for name in archived_names}
    depends: dict[str, set[str]] = {name: set() for name in archived_names}
    for row in await conn.fetch(SELECT_FOREIGN_KEYS):
        table, referenced = row["table_name"], row["referenced"]
        if table not in archived_names or referenced not in columns:
            continue
        depends[table].add(referenced)
        for column, target in zip(row["columns"], row["referenced_columns"], strict=True):
            if identity[referenced] is not None and target == identity[referenced]:
                references[table][column] = referenced
    arrays: dict[str, dict[str, str]] = {name: {} for name in archived_names}
    for (table, column), referenced in ID_ARRAYS.items():
        if table in archived_names and any(c.name == column for c in columns[table]):
            arrays[table][column] = referenced
            depends[table].add(referenced)
    level = await conn.fetchval(SELECT_SCHEMA_LEVEL)
    return CampaignSchema(
        archived=tuple(
            ArchivedTable(
                name=name,
                columns=tuple(columns[name]),
                primary_key=keys.get(name, ()),
                references=references[name],
                id_arrays=arrays[name],
            )
            for name in dependency_order(depends)
        ),
        all_tables=frozenset(columns),
        level=int(level or 0),
    )


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _ids(table: str) -> str:
    """The temporary table numbering `table`'s ids (old_id or n, and new_id on import)."""
    return _quoted(f"archive_ids_{table}")


def _staged(table: str) -> str:
    return _quoted(f"archive_rows_{table}")


# --- export ------------------------------------------------------------------------------

EXPORT_SETTINGS = (
    # Timestamps in JSON carry the session's zone; floats their shortest exact digits.
    "SET LOCAL TimeZone = 'UTC'",
    "SET LOCAL extra_float_digits = 1",
)


def number_ids(table: ArchivedTable) -> str:
    """Each of the campaign's ids of `table` with its number in the archive (id order)."""
    return (
        f"CREATE TEMP TABLE {_ids(table.name)} ON COMMIT DROP AS "
        f"SELECT {_quoted(table.identity or 'id')} AS old_id, "
        f"row_number() OVER (ORDER BY {_quoted(table.identity or 'id')}) AS n "
        f"FROM {_quoted(table.name)} WHERE {_quoted(table.key)} = $1"
    )


def export_expression(table: ArchivedTable, column: Column) -> str:
    name = _quoted(column.name)
    if column.identity:
        return "m.n"
    if column.name in table.references:
        return (
            f"(SELECT i.n FROM {_ids(table.references[column.name])} i WHERE i.old_id = x.{name})"
        )
    if column.name in table.id_arrays:
        return (
            f"ARRAY(SELECT i.n FROM unnest(x.{name}) WITH ORDINALITY u(id, k) "
            f"JOIN {_ids(table.id_arrays[column.name])} i ON i.old_id = u.id ORDER BY u.k)"
        )
    if column.base_type == "vector":
        return f"x.{name}::real[]"
    return f"x.{name}"


def export_statement(table: ArchivedTable) -> str:
    """The campaign's rows of `table` as JSON text, in primary-key order."""
    values = ", ".join(
        f"{export_expression(table, column)} AS {_quoted(column.name)}" for column in table.archived
    )
    numbered = (
        f" JOIN {_ids(table.name)} m ON m.old_id = x.{_quoted(table.identity)}"
        if table.identity
        else ""
    )
    order = ", ".join(f"x.{_quoted(c)}" for c in table.primary_key) or "1"
    return (
        f"SELECT to_jsonb(r)::text AS row FROM {_quoted(table.name)} x{numbered} "
        f"CROSS JOIN LATERAL (SELECT {values}) r "
        f"WHERE x.{_quoted(table.key)} = $1 ORDER BY {order}"
    )


def _line(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": ")) + "\n"


async def archive_lines(db: Database, campaign_id: str) -> AsyncIterator[str]:
    """The campaign's archive, line by line (uncompressed), read on one snapshot."""
    with driver_errors(f"export campaign {campaign_id!r}"):
        async with db.pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            for setting in EXPORT_SETTINGS:
                await conn.execute(setting)
            if not await conn.fetchval(SELECT_EXISTS, campaign_id):
                raise NotFoundError(
                    f"No campaign {campaign_id!r}. `glyphoxa-mcp status` lists the campaigns."
                )
            schema = await read_schema(conn)
            for table in schema.archived:
                if table.identity:
                    await conn.execute(number_ids(table), campaign_id)
                    await conn.execute(
                        f"ALTER TABLE {_ids(table.name)} ADD PRIMARY KEY (old_id); "
                        f"ANALYZE {_ids(table.name)}"
                    )
            counts = {
                table.name: await conn.fetchval(
                    f"SELECT count(*) FROM {_quoted(table.name)} WHERE {_quoted(table.key)} = $1",
                    campaign_id,
                )
                for table in schema.archived
            }
            yield _line(
                {
                    "format": FORMAT,
                    "version": FORMAT_VERSION,
                    "campaign": campaign_id,
                    "schema": schema.level,
                    "embedding": {
                        "model": await conn.fetchval(SELECT_MODEL),
                        "dimension": db.embedding_dim,
                    },
                    "tables": [
                        {
                            "name": table.name,
                            "columns": {c.name: c.type for c in table.archived},
                            "rows": counts[table.name],
                        }
                        for table in schema.archived
                    ],
                }
            )
            for table in schema.archived:
                prefix = '{"table": ' + json.dumps(table.name) + ', "row": '
                async for record in conn.cursor(
                    export_statement(table), campaign_id, prefetch=PREFETCH
                ):
                    yield prefix + record["row"] + "}\n"


def gzip_member_header() -> bytes:
    """The gzip header an archive starts with: no name, no time, so equal content gives
    equal bytes. (RFC 1952: magic, deflate, no flags, mtime 0, no extra flags, unknown OS.)"""
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


async def archive_bytes(
    lines: AsyncIterator[str], chunk: int = 1 << 16
) -> AsyncGenerator[bytes, None]:
    """`lines` gzip'd, as pieces of about `chunk` bytes."""
    deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    crc, size, pending = 0, 0, [gzip_member_header()]
    waiting = len(pending[0])
    async for line in lines:
        data = line.encode("utf-8")
        crc = zlib.crc32(data, crc)
        size += len(data)
        piece = deflate.compress(data)
        if piece:
            pending.append(piece)
            waiting += len(piece)
        if waiting >= chunk:
            yield b"".join(pending)
            pending, waiting = [], 0
    pending.append(deflate.flush())
    pending.append(crc.to_bytes(4, "little") + (size & 0xFFFFFFFF).to_bytes(4, "little"))
    yield b"".join(pending)


# --- import ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reembedding:
    """How the vectors of a table whose every row must have one are made again: the staged
    rows' texts, `batch` rows after ordinal $1, and the text each vector is made of."""

    column: str
    texts: str
    text: Callable[[asyncpg.Record], str]


REEMBEDDINGS = {
    "chunks": Reembedding(
        "embedding",
        f"SELECT s.ord, s.row ->> 'content' AS content FROM {_staged('chunks')} s "
        "WHERE s.ord > $1 ORDER BY s.ord LIMIT $2",
        lambda row: str(row["content"]),
    ),
    "lore_sections": Reembedding(
        "embedding",
        f"SELECT s.ord, d.row ->> 'title' AS title, s.row ->> 'heading' AS heading, "
        f"s.row ->> 'text' AS text FROM {_staged('lore_sections')} s "
        f"LEFT JOIN {_staged('lore_documents')} d ON d.row ->> 'id' = s.row ->> 'document_id' "
        "WHERE s.ord > $1 ORDER BY s.ord LIMIT $2",
        lambda row: embedding_text(
            str(row["title"] or ""), LoreSection(heading=str(row["heading"]), text=str(row["text"]))
        ),
    ),
}


@dataclass(frozen=True)
class Header:
    campaign_id: str
    schema_level: int
    model: str | None
    dimension: int
    tables: Mapping[str, tuple[tuple[str, ...], int]]
    """Each table's archived columns and row count, in the archive's order."""


def _problem(source: str, line: int, message: str) -> InvalidInputError:
    return InvalidInputError(f"{source}:{line}: {message}", field="FILE")


def parse_header(text: str, source: str) -> Header:
    """The archive's first line, checked. (pure)"""
    try:
        header = json.loads(text)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise _problem(source, 1, f"not a campaign archive (its first line names no {FORMAT!r}).")
    version = header.get("version")
    if not isinstance(version, int) or version < 1:
        raise _problem(source, 1, "version: a whole number from 1.")
    if version > FORMAT_VERSION:
        raise _problem(
            source,
            1,
            f"version: archive format {version} is newer than this glyphoxa-mcp reads "
            f"(up to {FORMAT_VERSION}); upgrade glyphoxa-mcp to import it.",
        )
    campaign, embedding, tables = (
        header.get("campaign"),
        header.get("embedding"),
        header.get("tables"),
    )
    if not isinstance(campaign, str) or not re.match(KEY_PATTERN, campaign):
        raise _problem(source, 1, "campaign: a campaign id.")
    if not isinstance(embedding, dict) or not isinstance(embedding.get("dimension"), int):
        raise _problem(source, 1, "embedding: the model and the dimension of the vectors.")
    if not isinstance(tables, list) or not all(
        isinstance(t, dict)
        and isinstance(t.get("name"), str)
        and isinstance(t.get("columns"), dict)
        and isinstance(t.get("rows"), int)
        for t in tables
    ):
        raise _problem(source, 1, "tables: each with its name, columns and rows.")
    model = embedding.get("model")
    return Header(
        campaign_id=campaign,
        schema_level=int(header.get("schema") or 0),
        model=model if isinstance(model, str) else None,
        dimension=embedding["dimension"],
        tables={t["name"]: (tuple(t["columns"]), t["rows"]) for t in tables},
    )


def check_fits(header: Header, schema: CampaignSchema, source: str) -> None:
    """Refuse an archive with tables or columns this database does not have (one made by a
    newer glyphoxa-mcp): importing it would lose them. (pure)"""
    unknown = []
    for name, (columns, _) in header.tables.items():
        table = schema.table(name)
        if table is None:
            unknown.append(name)
            continue
        known = {c.name for c in table.archived}
        unknown += [f"{name}.{c}" for c in columns if c not in known]
    if unknown:
        raise _problem(
            source,
            1,
            f"this database has no {', '.join(unknown)} (the archive is of schema "
            f"{header.schema_level}, this database of {schema.level}); upgrade glyphoxa-mcp "
            "(`glyphoxa-mcp upgrade`) to import it.",
        )


def import_expression(table: ArchivedTable, column: Column, blank_vectors: bool) -> str:
    name = _quoted(column.name)
    if column.identity:
        return "m.new_id"
    if column.name in table.references:
        return (
            f"(SELECT i.new_id FROM {_ids(table.references[column.name])} i WHERE i.n = x.{name})"
        )
    if column.name in table.id_arrays:
        return (
            f"ARRAY(SELECT i.new_id FROM unnest(x.{name}) WITH ORDINALITY u(n, k) "
            f"JOIN {_ids(table.id_arrays[column.name])} i ON i.n = u.n ORDER BY u.k)"
        )
    if column.base_type == "vector" and blank_vectors and not column.not_null:
        return "NULL"
    return f"x.{name}"


def insert_statement(table: ArchivedTable, columns: Sequence[str], blank_vectors: bool) -> str:
    """The staged rows of `table` into it, for campaign $1, with new ids."""
    chosen = [c for c in table.archived if c.name in columns]
    targets = [_quoted(table.key), *(_quoted(c.name) for c in chosen)]
    values = ["$1", *(import_expression(table, c, blank_vectors) for c in chosen)]
    numbered = (
        f" JOIN {_ids(table.name)} m ON m.n = x.{_quoted(table.identity)}" if table.identity else ""
    )
    # Vectors left to be made again are not read at all: another model's width is refused.
    blanked = [
        c.name for c in chosen if blank_vectors and c.base_type == "vector" and not c.not_null
    ]
    row = "s.row" + "".join(" - '" + name.replace("'", "''") + "'" for name in blanked)
    return (
        f"INSERT INTO {_quoted(table.name)} ({', '.join(targets)})"
        + (" OVERRIDING SYSTEM VALUE" if table.identity else "")
        + f" SELECT {', '.join(values)} FROM {_staged(table.name)} s"
        f" CROSS JOIN LATERAL jsonb_populate_record(NULL::{_quoted(table.name)}, {row}) x"
        f"{numbered} ORDER BY s.ord"
    )


def new_ids_statement(table: ArchivedTable) -> str:
    """A new id from the table's sequence for each staged row, in the archive's order."""
    identity = table.identity or "id"
    return (
        f"CREATE TEMP TABLE {_ids(table.name)} ON COMMIT DROP AS "
        f"SELECT n, nextval(pg_get_serial_sequence('{_quoted(table.name)}', '{identity}')) "
        f"AS new_id FROM (SELECT (s.row ->> '{identity}')::bigint AS n "
        f"FROM {_staged(table.name)} s ORDER BY 1) ordered"
    )


def read_archive(path: str) -> Iterator[str]:
    """The lines of a gzip'd archive (or of a plain JSON Lines file)."""
    try:
        with open(path, "rb") as raw:
            gzipped = raw.read(2) == b"\x1f\x8b"
        with (
            gzip.open(path, "rt", encoding="utf-8")
            if gzipped
            else open(path, encoding="utf-8") as opened
        ):
            yield from opened
    except FileNotFoundError:
        raise InvalidInputError(f"{path}: no such file.", field="FILE") from None
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise InvalidInputError(
            f"{path}: the archive is damaged or cut short ({exc}); nothing was imported.",
            field="FILE",
        ) from None


class _Stager:
    """Rows streamed into one temporary table per archived table, a batch at a time."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self.counts: dict[str, int] = {}
        self._table: str | None = None
        self._batch: list[tuple[int, str]] = []

    async def start(self, tables: Iterable[str]) -> None:
        # Each line as it was read (COPY takes text), made JSON once all are in.
        for table in tables:
            await self.conn.execute(
                f"CREATE TEMP TABLE {_staged(table)} (ord bigint PRIMARY KEY, row text NOT NULL) "
                "ON COMMIT DROP"
            )
            self.counts[table] = 0

    async def finish(self) -> None:
        await self.flush()
        for table in self.counts:
            await self.conn.execute(
                f"ALTER TABLE {_staged(table)} ALTER COLUMN row TYPE jsonb "
                "USING (row::jsonb -> 'row')"
            )

    async def add(self, table: str, line: str) -> None:
        if table != self._table:
            await self.flush()
            self._table = table
        self.counts[table] += 1
        self._batch.append((self.counts[table], line))
        if len(self._batch) >= STAGE_BATCH:
            await self.flush()

    async def flush(self) -> None:
        if self._batch and self._table is not None:
            await self.conn.copy_records_to_table(
                f"archive_rows_{self._table}", records=self._batch, columns=["ord", "row"]
            )
        self._batch = []


async def _make_vectors_again(
    conn: asyncpg.Connection, table: str, recipe: Reembedding, embedder: Embedder
) -> None:
    after = 0
    while rows := await conn.fetch(recipe.texts, after, EMBED_BATCH):
        vectors = await embedder.embed([recipe.text(row) for row in rows])
        await conn.execute(
            f"UPDATE {_staged(table)} s SET row = jsonb_set(s.row, $3::text[], u.v::jsonb) "
            "FROM unnest($1::bigint[], $2::text[]) u(ord, v) WHERE s.ord = u.ord",
            [row["ord"] for row in rows],
            [json.dumps(vector) for vector in vectors],
            [recipe.column],
        )
        after = rows[-1]["ord"]


def _keeps_vectors(header: Header, db: Database, recorded: str | None) -> bool:
    """Whether the archive's vectors are this database's model's: the same width, and the
    same model as the one recorded here, if one is. An archive naming no model comes from a
    database no server embedded for (its vectors were loaded, as the bench's are): the width
    is all there is to check."""
    return header.dimension == db.embedding_dim and (
        header.model is None or recorded is None or recorded == header.model
    )


async def import_archive(
    db: Database,
    lines: Iterable[str],
    *,
    source: str,
    as_id: str | None = None,
    embedder: Callable[[], Embedder] | None = None,
) -> ArchiveSummary:
    """Restore the archive (`lines`, read from `source`) as a new campaign, its own id or
    `as_id`, in one transaction. `embedder` makes the configured embedder, called only when
    the archive's vectors are another model's than this database's, to make them again.
    A database with no model recorded yet takes the archive's vectors and its model."""
    numbered = enumerate(lines, start=1)
    first = next(numbered, None)
    if first is None:
        raise _problem(source, 1, "the file is empty; not a campaign archive.")
    header = parse_header(first[1], source)
    campaign_id = as_id or header.campaign_id
    if not re.match(KEY_PATTERN, campaign_id):
        raise InvalidInputError(
            f"{campaign_id!r}: a campaign id is 1-128 letters, digits, - _ . : (starting with a "
            "letter or digit).",
            field="--as",
        )
    with driver_errors("read the database's embedding model"):
        recorded = await db.pool.fetchval(SELECT_MODEL)
        # Before an embedder is loaded; checked again in the transaction.
        if await db.pool.fetchval(SELECT_EXISTS, campaign_id):
            raise _exists(campaign_id)
    keep = _keeps_vectors(header, db, recorded)
    made_by: Embedder | None = None
    if not keep:
        if embedder is None:
            raise ConfigurationError(
                f"The archive's vectors were made by {header.model!r} "
                f"({header.dimension} dimensions), this database's by {recorded!r} "
                f"({db.embedding_dim}): configure the embedder to make them again with."
            )
        made_by = embedder()
        await check_embedding_model(db, made_by.model)
    with driver_errors(f"import campaign {campaign_id!r}"):
        async with db.pool.acquire() as conn, conn.transaction():
            if await conn.fetchval(SELECT_EXISTS, campaign_id):
                raise _exists(campaign_id)
            schema = await read_schema(conn)
            check_fits(header, schema, source)
            stager = _Stager(conn)
            await stager.start(header.tables)
            await _stage(stager, numbered, header, source)
            if made_by is not None:
                for name, recipe in REEMBEDDINGS.items():
                    if name in header.tables:
                        await _make_vectors_again(conn, name, recipe, made_by)
            rows = await _insert(conn, schema, header, campaign_id, blank_vectors=not keep)
            if keep and header.model is not None and recorded is None:
                await conn.execute(RECORD_MODEL, header.model)
    return ArchiveSummary(
        campaign_id=campaign_id,
        rows=rows,
        embedding_model=made_by.model if made_by else (recorded or header.model),
        vectors_made_again=not keep,
    )


def _exists(campaign_id: str) -> ConflictError:
    return ConflictError(
        f"Campaign {campaign_id!r} exists already; nothing was imported. Import it under "
        "another id with --as NEW."
    )


async def _stage(
    stager: _Stager, numbered: Iterator[tuple[int, str]], header: Header, source: str
) -> None:
    order = list(header.tables)
    position = 0
    for number, text in numbered:
        try:
            line = json.loads(text)
        except ValueError:
            raise _problem(source, number, "not a JSON object.") from None
        table = line.get("table") if isinstance(line, dict) else None
        row = line.get("row") if isinstance(line, dict) else None
        if table not in header.tables or not isinstance(row, dict):
            raise _problem(
                source, number, 'a row is {"table": one of the header\'s, "row": {...}}.'
            )
        # Tables come in the header's order, each once, so that a row's references are known.
        while order[position] != table:
            position += 1
            if position == len(order):
                raise _problem(source, number, f"table {table!r} again, out of the header's order.")
        await stager.add(table, text)
    await stager.finish()
    for name, (_, expected) in header.tables.items():
        if stager.counts[name] != expected:
            raise InvalidInputError(
                f"{source}: table {name!r} holds {stager.counts[name]} rows where the header "
                f"says {expected}: the archive is cut short or was edited; nothing was imported.",
                field="FILE",
            )


async def _insert(
    conn: asyncpg.Connection,
    schema: CampaignSchema,
    header: Header,
    campaign_id: str,
    *,
    blank_vectors: bool,
) -> dict[str, int]:
    rows: dict[str, int] = {}
    for table in schema.archived:
        if table.name not in header.tables:
            continue
        if table.identity:
            await conn.execute(new_ids_statement(table))
            await conn.execute(
                f"ALTER TABLE {_ids(table.name)} ADD PRIMARY KEY (n); ANALYZE {_ids(table.name)}"
            )
        columns, _ = header.tables[table.name]
        status = await conn.execute(insert_statement(table, columns, blank_vectors), campaign_id)
        rows[table.name] = int(status.split()[-1])
        # The triggers of the next tables look these rows up (a passage its lines, sql/020):
        # counted with this transaction's rows, the planner takes the keys for it.
        await conn.execute(f"ANALYZE {_quoted(table.name)}")
    if "session_chunk_entities" in schema.all_tables:
        await conn.execute(TALLY_PASSAGE_ENTITIES, campaign_id)
    return rows
