"""What-if branches: a campaign's memory copied into a new campaign (`campaign fork`).

The copy is one transaction on one snapshot (REPEATABLE READ): a fork holds everything or
nothing, and never half of a write made meanwhile. The branch is an ordinary campaign for
every tool and command, records its parent (sql/026, storage/branches.py), and from then on
the two go their own ways. Every column is copied, as the catalog lists them (a column added
later is copied too); rows get new ids where ids are generated, and what points at them (a
passage's lines, a retcon's newer version, the line a fact was extracted from) is pointed at
the copies, or at nothing when the branch leaves the line out. `FORKED_TABLES` says for
every table how a fork treats it; tests/storage/test_branches.py checks that it names every
table of the schema, so a table added later must say how it is forked.

Forking as the memory stood after session S (`at_session`): the sessions are ordered as
`session list` orders them, and the cut is the moment the first session after S was
created (its row: `session.start`, `record`, `ingest`). The branch keeps
- the sessions up to S, with their lines, passages, summaries (and their parts) and session
  facts;
- the facts and relationships learned in those sessions, and of those learned in no
  session (the DM's, an import's) the ones stored before the cut; none learned in a later
  session;
- of a retconned fact, the version current at the cut (history allows it: every version is
  kept with when it was stored); a fact learned in a kept session but stored only after the
  cut (a session processed late) keeps its first version;
- the entities stored before the cut, and those a kept fact, relationship, line or session
  fact refers to; never the episode of a later session;
- the review queue's proposals of kept sessions, and the imports proposed before the cut;
- the lore library's documents added before the cut, with their sections, and the pins made
  before it.
What has no history is copied as it is now: entities' names and attributes, relationships'
attributes, who may know what, what the DM confirmed; and what was deleted is gone. Who may
know something is narrowed to the entities the branch keeps; when that leaves nobody of a
list of knowers, the item becomes secret (the DM's), so no NPC of the branch learns it.

Not copied: access tokens (each grants one campaign; the branch gets its own with `token
create --campaign NEW`). Derived rows are made by the same triggers as any insert (word
postings and statistics, row counts, the entity change log and version counters), or
counted again from the copies (the entities of each session's passages).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg
from pydantic import BaseModel, ConfigDict

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.episodes import EPISODE_PREFIX, MAX_ID
from glyphoxa_mcp.domain.models import MAX_NAME_CHARS
from glyphoxa_mcp.domain.reports import Fork
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.errors import ConflictError, InvalidInputError, NotFoundError

FORKED_TABLES = {
    "campaigns": "the branch's own row: the parent's settings, its lineage",
    "sessions": "copied up to the fork point",
    "session_entries": "copied with their sessions, under new ids",
    "chunks": "copied with their sessions, pointing at the copied lines",
    "session_chunk_entities": "counted again from the copied passages",
    "session_facts": "copied with their sessions",
    "scenes": "copied with their sessions; an entity the branch leaves out is not named in them",
    "summary_parts": "copied with their sessions",
    "entities": "copied, but for those only later sessions know",
    "relationships": "copied, but for those learned later",
    "facts": "copied with their history, as current at the fork point",
    "pending_entities": "copied, but for proposals of later sessions",
    "session_npcs": "made by the triggers of the copied lines (sql/032)",
    "word_postings": "made by the triggers of the copied rows (sql/024)",
    "word_frequencies": "made by the triggers of the copied rows (sql/024)",
    "word_collections": "made by the triggers of the copied rows (sql/024)",
    "word_audiences": "made by the triggers of the copied rows (sql/036)",
    "word_readers": "made by the triggers of the copied rows (sql/036)",
    "campaign_row_counts": "made by the triggers of the copied rows (sql/010)",
    "entity_versions": "the branch's own counter (sql/007, sql/026)",
    "knowledge_versions": "the branch's own counter (sql/015, sql/026)",
    "entity_changes": "the branch's own log, written as its entities are inserted (sql/025)",
    "access_tokens": "not copied: a token grants one campaign; the branch gets its own",
    "names_read": "not copied: a cache, filled again as the branch's texts are read (sql/039)",
    "lore_documents": "copied, but for those added after the cut",
    "lore_sections": "copied with their documents",
    "lore_pins": "copied, but for those pinned after the cut",
}

SELECT_PARENT = "SELECT name FROM campaigns WHERE id = $1 FOR KEY SHARE"
SELECT_EXISTS = "SELECT EXISTS (SELECT FROM campaigns WHERE id = $1)"
# In the order `session list` shows them.
SELECT_SESSIONS = """
SELECT id, created_at FROM sessions WHERE campaign_id = $1
ORDER BY coalesce(started_at, created_at), id
"""
SELECT_COLUMNS = """
SELECT c.relname AS table_name, array_agg(a.attname::text ORDER BY a.attnum) AS columns
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = ANY($1::text[])
  AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
GROUP BY c.relname
"""

CREATE_FORK_SESSIONS = """
CREATE TEMP TABLE fork_sessions ON COMMIT DROP AS
SELECT id, kept FROM unnest($1::text[], $2::boolean[]) AS s(id, kept)
"""
CREATE_FORK_CUT = "CREATE TEMP TABLE fork_cut ON COMMIT DROP AS SELECT $1::timestamptz AS cut"
KEPT_SESSIONS = "(SELECT id FROM fork_sessions WHERE kept)"
BEFORE_CUT = "((SELECT cut FROM fork_cut) IS NULL OR {stored} < (SELECT cut FROM fork_cut))"


def _named(session: str, kept: bool) -> str:
    return (
        f"EXISTS (SELECT FROM fork_sessions s WHERE s.id = {session} "
        f"AND {'' if kept else 'NOT '}s.kept)"
    )


def kept_rule(*sessions: str, stored: str) -> str:
    """Whether the branch keeps an item learned in the `sessions` (SQL expressions, NULL for
    none) and stored at `stored`: never when one is a later session; when one is a kept
    session; otherwise (learned in none) when it was stored before the cut."""
    later = " OR ".join(_named(session, kept=False) for session in sessions)
    kept = " OR ".join(_named(session, kept=True) for session in sessions)
    return f"(NOT ({later}) AND ({kept} OR {BEFORE_CUT.format(stored=stored)}))"


def _new_ids(table: str) -> str:
    return f"nextval(pg_get_serial_sequence('{table}', 'id'))"


# The lines of the kept sessions, each with the id of its copy (in the same order).
CREATE_FORK_ENTRIES = f"""
CREATE TEMP TABLE fork_entries ON COMMIT DROP AS
SELECT id AS old_id, {_new_ids("session_entries")} AS new_id FROM session_entries
WHERE campaign_id = $1 AND session_id IN {KEPT_SESSIONS}
ORDER BY id
"""
# Every version of every fact, by chain (`head`: the current version, depth 0); of each kept
# chain, the version current at the cut and those it replaced, each with its copy's id.
CREATE_FORK_FACTS = f"""
CREATE TEMP TABLE fork_facts ON COMMIT DROP AS
WITH RECURSIVE version AS (
    SELECT f.id, f.id AS head, 0 AS depth, f.created_at FROM facts f
    WHERE f.campaign_id = $1 AND f.superseded_by IS NULL
    UNION ALL
    SELECT older.id, version.head, version.depth + 1, older.created_at
    FROM version JOIN facts older ON older.campaign_id = $1 AND older.superseded_by = version.id
), chain AS (
    SELECT head, max(depth) AS first_depth,
           min(depth) FILTER (WHERE {BEFORE_CUT.format(stored="created_at")}) AS at_cut
    FROM version GROUP BY head
), kept_chain AS (
    SELECT chain.head, coalesce(chain.at_cut, chain.first_depth) AS current_depth
    FROM chain
    JOIN version first ON first.head = chain.head AND first.depth = chain.first_depth
    JOIN facts f ON f.campaign_id = $1 AND f.id = first.id
    WHERE {kept_rule("f.session_id", "f.provenance ->> 'session_id'", stored="f.created_at")}
)
SELECT version.id AS old_id, version.depth = kept_chain.current_depth AS current,
       {_new_ids("facts")} AS new_id
FROM version JOIN kept_chain ON kept_chain.head = version.head
WHERE version.depth >= kept_chain.current_depth
ORDER BY version.id
"""
CREATE_FORK_RELATIONSHIPS = f"""
CREATE TEMP TABLE fork_relationships ON COMMIT DROP AS
SELECT r.id, r.source_id, r.target_id FROM relationships r
WHERE r.campaign_id = $1
  AND {kept_rule("r.provenance ->> 'session_id'", stored="r.created_at")}
"""
LATER_EPISODE = f"""(e.type = 'event'
    AND e.id = left('{EPISODE_PREFIX}' || (e.attributes ->> 'session_id'), {MAX_ID})
    AND {_named("e.attributes ->> 'session_id'", kept=False)})"""
CREATE_FORK_ENTITIES = f"""
CREATE TEMP TABLE fork_entities ON COMMIT DROP AS
SELECT e.id FROM entities e
WHERE e.campaign_id = $1 AND NOT {LATER_EPISODE}
  AND ({BEFORE_CUT.format(stored="e.created_at")} OR e.id IN (
      SELECT source_id FROM fork_relationships
      UNION ALL SELECT target_id FROM fork_relationships
      UNION ALL SELECT f.subject_id FROM facts f JOIN fork_facts m ON m.old_id = f.id
                WHERE f.campaign_id = $1
      UNION ALL SELECT x.npc_id FROM session_entries x JOIN fork_entries m ON m.old_id = x.id
                WHERE x.campaign_id = $1
      UNION ALL SELECT x.npc_id FROM session_facts x
                WHERE x.campaign_id = $1 AND x.session_id IN {KEPT_SESSIONS}))
"""
KEYED_TEMP_TABLES = (("fork_entries", "old_id"), ("fork_facts", "old_id"), ("fork_entities", "id"))

IN_FORK = "IN (SELECT id FROM fork_entities)"
KNOWN_BY = (
    f"ARRAY(SELECT k FROM unnest(x.known_by) WITH ORDINALITY u(k, n) WHERE k {IN_FORK} ORDER BY n)"
)
# A list of knowers the branch keeps none of: nobody but the DM may know it there.
SECRET = (
    "x.secret OR (cardinality(x.known_by) > 0 "
    f"AND NOT EXISTS (SELECT FROM unnest(x.known_by) k WHERE k {IN_FORK}))"
)
VISIBILITY: dict[str, str | None] = {"known_by": KNOWN_BY, "secret": SECRET}
# The copy of the line an item was extracted from; none when the branch leaves it out.
SOURCE_LINE = "(SELECT s.new_id FROM fork_entries s WHERE s.old_id = x.source_entry_id)"
NEW_CAMPAIGN: dict[str, str | None] = {"campaign_id": "$2"}
# The session a proposal of the review queue came from: its reference is 'SESSION:ENTITY'.
PROPOSAL_SESSION = """(SELECT s.id FROM fork_sessions s
    WHERE x.source = 'session' AND starts_with(x.source_ref, s.id || ':')
    ORDER BY length(s.id) DESC LIMIT 1)"""
# Each copied passage's trigger looks its session and lines up (sql/020). To the planner's
# statistics the new campaign has no rows, so it would read them through an index on the
# campaign alone, every line of the branch for each passage (hours at reference scale);
# counted again with the copies in (this transaction's own rows count), it takes the keys.
ANALYZE_LOOKED_UP = "ANALYZE sessions, session_entries"
TALLY_PASSAGE_ENTITIES = """
INSERT INTO session_chunk_entities (campaign_id, session_id, entity_id, chunk_count)
SELECT campaign_id, session_id, entity_id, count(*)
FROM chunks CROSS JOIN LATERAL unnest(entity_ids) AS entity_id
WHERE campaign_id = $1 AND session_id IS NOT NULL
GROUP BY campaign_id, session_id, entity_id
"""


@dataclass(frozen=True)
class Copy:
    """How one table's rows are copied: from `source` (the table as `x`, joined to what
    it needs) where `condition` holds; `overrides` replace a column's value (None: left to
    its default, a new identity); `identity` when the ids are given (OVERRIDING)."""

    table: str
    source: str
    condition: str
    overrides: Mapping[str, str | None]
    identity: bool = False
    order_by: str | None = None


def copies(partial: bool) -> tuple[Copy, ...]:
    """The copies, in an order that satisfies every foreign key. `partial`: the fork leaves
    sessions out (entities may be missing, so passages' entity tags are narrowed)."""
    entry_ids = (
        "ARRAY(SELECT m.new_id FROM unnest(x.entry_ids) WITH ORDINALITY u(id, n) "
        "JOIN fork_entries m ON m.old_id = u.id ORDER BY u.n)"
    )
    entity_ids = (
        "ARRAY(SELECT t FROM unnest(x.entity_ids) WITH ORDINALITY u(t, n) "
        f"WHERE t {IN_FORK} ORDER BY n)"
    )
    return (
        Copy(
            "sessions",
            "sessions x",
            f"x.campaign_id = $1 AND x.id IN {KEPT_SESSIONS}",
            NEW_CAMPAIGN,
        ),
        Copy(
            "entities",
            "entities x",
            f"x.campaign_id = $1 AND x.id {IN_FORK}",
            NEW_CAMPAIGN | VISIBILITY,
        ),
        Copy(
            "session_entries",
            "session_entries x JOIN fork_entries m ON m.old_id = x.id",
            "x.campaign_id = $1",
            NEW_CAMPAIGN | {"id": "m.new_id"},
            identity=True,
        ),
        Copy(
            "relationships",
            "relationships x JOIN fork_relationships m ON m.id = x.id",
            f"x.campaign_id = $1 AND x.source_id {IN_FORK} AND x.target_id {IN_FORK}",
            NEW_CAMPAIGN | VISIBILITY | {"id": None, "source_entry_id": SOURCE_LINE},
            order_by="x.id",
        ),
        Copy(
            "facts",
            "facts x JOIN fork_facts m ON m.old_id = x.id "
            "LEFT JOIN fork_facts newer ON newer.old_id = x.superseded_by",
            f"x.campaign_id = $1 AND (x.subject_id IS NULL OR x.subject_id {IN_FORK})",
            NEW_CAMPAIGN
            | VISIBILITY
            | {
                "id": "m.new_id",
                "superseded_by": "CASE WHEN m.current THEN NULL ELSE newer.new_id END",
                "source_entry_id": SOURCE_LINE,
            },
            identity=True,
        ),
        Copy(
            "chunks",
            "chunks x",
            f"x.campaign_id = $1 AND (x.session_id IN {KEPT_SESSIONS} OR (x.session_id IS NULL "
            f"AND {BEFORE_CUT.format(stored='x.created_at')}))",
            NEW_CAMPAIGN
            | {"id": None, "entry_ids": entry_ids}
            | ({"entity_ids": entity_ids} if partial else {}),
            order_by="x.id",
        ),
        Copy(
            "scenes",
            "scenes x",
            f"x.campaign_id = $1 AND x.session_id IN {KEPT_SESSIONS}",
            NEW_CAMPAIGN
            | {
                "location_id": f"CASE WHEN x.location_id {IN_FORK} THEN x.location_id END",
                "present": (
                    "ARRAY(SELECT p FROM unnest(x.present) WITH ORDINALITY u(p, n) "
                    f"WHERE p {IN_FORK} ORDER BY n)"
                ),
            },
        ),
        Copy(
            "summary_parts",
            "summary_parts x",
            f"x.campaign_id = $1 AND x.session_id IN {KEPT_SESSIONS}",
            NEW_CAMPAIGN,
        ),
        Copy(
            "session_facts",
            "session_facts x",
            f"x.campaign_id = $1 AND x.session_id IN {KEPT_SESSIONS} "
            f"AND (x.npc_id IS NULL OR x.npc_id {IN_FORK})",
            NEW_CAMPAIGN,
        ),
        Copy(
            "lore_documents",
            "lore_documents x",
            f"x.campaign_id = $1 AND {BEFORE_CUT.format(stored='x.added_at')}",
            NEW_CAMPAIGN | VISIBILITY,
        ),
        Copy(
            "lore_sections",
            "lore_sections x JOIN lore_documents d "
            "ON d.campaign_id = x.campaign_id AND d.id = x.document_id",
            f"x.campaign_id = $1 AND {BEFORE_CUT.format(stored='d.added_at')}",
            NEW_CAMPAIGN | {"id": None},
            order_by="x.id",
        ),
        Copy(
            "lore_pins",
            "lore_pins x JOIN lore_documents d "
            "ON d.campaign_id = x.campaign_id AND d.id = x.document_id",
            f"x.campaign_id = $1 AND x.npc_id {IN_FORK} "
            f"AND {BEFORE_CUT.format(stored='x.pinned_at')} "
            f"AND {BEFORE_CUT.format(stored='d.added_at')}",
            NEW_CAMPAIGN,
        ),
        Copy(
            "pending_entities",
            "pending_entities x",
            f"x.campaign_id = $1 AND {kept_rule(PROPOSAL_SESSION, stored='x.created_at')}",
            NEW_CAMPAIGN | {"id": None},
            order_by="x.id",
        ),
    )


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def insert_statement(copy: Copy, columns: Sequence[str]) -> str:
    """INSERT ... SELECT of every column of the table, as `copy` says."""
    targets, values = [], []
    for column in columns:
        value = copy.overrides.get(column, f"x.{_quoted(column)}")
        if value is not None:
            targets.append(_quoted(column))
            values.append(value)
    return (
        f"INSERT INTO {copy.table} ({', '.join(targets)})"
        + (" OVERRIDING SYSTEM VALUE" if copy.identity else "")
        + f" SELECT {', '.join(values)} FROM {copy.source} WHERE {copy.condition}"
        + (f" ORDER BY {copy.order_by}" if copy.order_by else "")
    )


def campaign_statement(columns: Sequence[str]) -> str:
    """The branch's own row: the parent's, with its id ($2), name ($3) and lineage."""
    copy = Copy(
        "campaigns",
        "campaigns x",
        "x.id = $1",
        {
            "id": "$2",
            "name": "$3",
            "created_at": "now()",
            "forked_from": "$1",
            "forked_at_session": "$4",
            "forked_at": "now()",
        },
    )
    return insert_statement(copy, columns)


class ForkPoint(BaseModel):
    """Which sessions a fork keeps, and the moment after which nothing else is kept."""

    model_config = ConfigDict(frozen=True)

    at_session: str | None
    kept: tuple[str, ...]
    later: tuple[str, ...]
    cut: datetime | None


def fork_point(sessions: Sequence[tuple[str, datetime]], at_session: str | None) -> ForkPoint:
    """`sessions`: every session's id and when its row was made, in `session list` order.
    (pure)"""
    ids = [session_id for session_id, _ in sessions]
    if at_session is None:
        return ForkPoint(at_session=None, kept=tuple(ids), later=(), cut=None)
    if at_session not in ids:
        raise NotFoundError(
            f"--at-session: no session {at_session!r} in the campaign. "
            "`glyphoxa-mcp session list` lists them."
        )
    split = ids.index(at_session) + 1
    later = sessions[split:]
    return ForkPoint(
        at_session=at_session,
        kept=tuple(ids[:split]),
        later=tuple(ids[split:]),
        cut=min((created for _, created in later), default=None),
    )


def _inserted(status: str) -> int:
    return int(status.split()[-1])


def _branch_name(parent_name: str, new_id: str, name: str | None) -> str:
    if name is not None:
        if not name.strip() or len(name) > MAX_NAME_CHARS or "\x00" in name:
            raise InvalidInputError(
                f"--name: 1 to {MAX_NAME_CHARS} characters, not blank.", field="--name"
            )
        return name.strip()
    default = f"{parent_name} ({new_id})"
    return default if len(default) <= MAX_NAME_CHARS else new_id


async def fork_campaign(
    db: Database,
    parent_id: str,
    new_id: str,
    *,
    at_session: str | None = None,
    name: str | None = None,
) -> Fork:
    """Copy campaign `parent_id` into a new campaign `new_id` (everything, or as it stood
    after session `at_session`) in one transaction; see the module for what is kept."""
    if not re.match(KEY_PATTERN, new_id):
        raise InvalidInputError(
            f"{new_id!r}: a campaign id is 1-128 letters, digits, - _ . : (starting with a "
            "letter or digit).",
            field="campaign",
        )
    with driver_errors(f"fork campaign {parent_id!r} into {new_id!r}"):
        async with db.pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            parent_name = await conn.fetchval(SELECT_PARENT, parent_id)
            if parent_name is None:
                raise NotFoundError(
                    f"No campaign {parent_id!r}. `glyphoxa-mcp status` lists the campaigns."
                )
            if await conn.fetchval(SELECT_EXISTS, new_id):
                raise ConflictError(
                    f"Campaign {new_id!r} exists already; nothing was copied. Fork into another id."
                )
            sessions = [
                (r["id"], r["created_at"]) for r in await conn.fetch(SELECT_SESSIONS, parent_id)
            ]
            point = fork_point(sessions, at_session)
            rows = await _copy(
                conn, parent_id, new_id, point, _branch_name(parent_name, new_id, name)
            )
    return Fork(
        campaign_id=new_id,
        parent_id=parent_id,
        at_session=at_session,
        sessions_left_out=point.later,
        rows=rows,
    )


async def _copy(
    conn: asyncpg.Connection, parent_id: str, new_id: str, point: ForkPoint, name: str
) -> dict[str, int]:
    ids = [*point.kept, *point.later]
    kept = [True] * len(point.kept) + [False] * len(point.later)
    await conn.execute(CREATE_FORK_SESSIONS, ids, kept)
    await conn.execute(CREATE_FORK_CUT, point.cut)
    for statement in (CREATE_FORK_ENTRIES, CREATE_FORK_FACTS, CREATE_FORK_RELATIONSHIPS):
        await conn.execute(statement, parent_id)
    await conn.execute(CREATE_FORK_ENTITIES, parent_id)
    for table, key in KEYED_TEMP_TABLES:
        await conn.execute(f"ALTER TABLE {table} ADD PRIMARY KEY ({key}); ANALYZE {table}")
    plan = copies(partial=bool(point.later))
    columns = {
        row["table_name"]: row["columns"]
        for row in await conn.fetch(SELECT_COLUMNS, ["campaigns", *(c.table for c in plan)])
    }
    await conn.execute(
        campaign_statement(columns["campaigns"]), parent_id, new_id, name, point.at_session
    )
    rows = {}
    # A table the schema does not have (yet) has nothing to copy.
    for copy in (copy for copy in plan if copy.table in columns):
        status = await conn.execute(insert_statement(copy, columns[copy.table]), parent_id, new_id)
        rows[copy.table] = _inserted(status)
        if copy.table == "session_entries":
            await conn.execute(ANALYZE_LOOKED_UP)
    rows["session_chunk_entities"] = _inserted(await conn.execute(TALLY_PASSAGE_ENTITIES, new_id))
    return rows
