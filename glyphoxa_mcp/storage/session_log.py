"""L1: the verbatim session log, with full-text search."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.db.write_deadline import WriteProgress
from glyphoxa_mcp.domain.models import (
    NO_FILTERS,
    Entry,
    EntryMatch,
    NewEntry,
    SearchFilters,
    TextCorrection,
    checked_query,
)
from glyphoxa_mcp.domain.scenes import SpokenBy
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.sql_parts import Params, entry_conditions
from glyphoxa_mcp.storage.word_ranking import WordSearch, rank_by_words

ENTRY_COLUMNS = (
    "e.id, e.session_id, e.speaker_id, e.speaker_name, e.text, e.raw_text, e.npc_id, "
    "e.spoken_at, e.duration_ms, e.words, e.corrections, e.dm_only"
)
COPY_COLUMNS = (
    "source_key",
    "speaker_id",
    "speaker_name",
    "text",
    "raw_text",
    "npc_id",
    "spoken_at",
    "duration_ms",
    "words",
    "corrections",
    "ordinal",
)
CREATE_INCOMING = """
CREATE TEMP TABLE incoming_entries (
    source_key text, speaker_id text, speaker_name text, text text, raw_text text,
    npc_id text, spoken_at timestamptz, duration_ms integer, words text, corrections text,
    ordinal integer
) ON COMMIT DROP
"""
INSERT_INCOMING = """
INSERT INTO session_entries
    (campaign_id, session_id, source_key, speaker_id, speaker_name, text, raw_text,
     npc_id, spoken_at, duration_ms, words, corrections)
SELECT $1, $2, source_key, speaker_id, speaker_name, text, raw_text, npc_id, spoken_at,
       duration_ms, words::jsonb, corrections::jsonb
FROM incoming_entries ORDER BY ordinal
ON CONFLICT (campaign_id, session_id, source_key) DO NOTHING
RETURNING id
"""
SELECT_BY_KEYS = f"""
SELECT e.source_key, {ENTRY_COLUMNS} FROM session_entries e
WHERE e.campaign_id = $1 AND e.session_id = $2 AND e.source_key = ANY($3::text[])
"""
SELECT_RECENT = f"""
WITH window_end AS (
    SELECT coalesce($3::timestamptz, max(spoken_at)) AS t
    FROM session_entries WHERE campaign_id = $1 AND session_id = $2
)
SELECT * FROM (
    SELECT {ENTRY_COLUMNS} FROM session_entries e, window_end w
    WHERE e.campaign_id = $1 AND e.session_id = $2
      AND e.spoken_at > w.t - $4::interval AND e.spoken_at <= w.t
      AND glyphoxa_may_read(e.dm_only, e.heard_by, $6::text)
    ORDER BY e.spoken_at DESC, e.id DESC
    LIMIT $5
) latest
ORDER BY spoken_at, id
"""
# The lines spoken just before and just after each line of its session, as stored (DM-only
# ones too): a name split between two lines is judged with both.
SELECT_NEIGHBOURS = """
SELECT e.id,
    (SELECT b.text FROM session_entries b
     WHERE b.campaign_id = e.campaign_id AND b.session_id = e.session_id
       AND b.spoken_at <= e.spoken_at AND (b.spoken_at, b.id) < (e.spoken_at, e.id)
     ORDER BY b.spoken_at DESC, b.id DESC LIMIT 1) AS before,
    (SELECT a.text FROM session_entries a
     WHERE a.campaign_id = e.campaign_id AND a.session_id = e.session_id
       AND a.spoken_at >= e.spoken_at AND (a.spoken_at, a.id) > (e.spoken_at, e.id)
     ORDER BY a.spoken_at, a.id LIMIT 1) AS after
FROM session_entries e
WHERE e.campaign_id = $1 AND e.id = ANY($2::bigint[])
"""
SELECT_BY_IDS = f"""
SELECT {ENTRY_COLUMNS} FROM session_entries e
WHERE e.campaign_id = $1 AND e.id = ANY($2::bigint[])
ORDER BY e.spoken_at, e.id
"""
# A speaker says thousands of lines, and all of them hold the same few ids: the ids going by
# the name are found one after another through the index (each the least id after the
# last), not by reading every line and dropping repeats. Only the lines the reader may read
# count ($3: the NPC reading, NULL for the DM; $4: sessions left out), and no speaker hidden
# from it ($5), so that someone who spoke only where a reader may not look, or whom it may
# not know, is to that reader someone who never spoke: no row, as for a name no one has.
# The hidden ids are left out of what was found, not of the walk: left out of the walk, the
# next id would be sought through every line of a hidden speaker first, which would take
# as long as the speaker spoke.
SELECT_SPEAKERS = """
WITH RECURSIVE named (speaker_id) AS (
    (SELECT speaker_id FROM session_entries
     WHERE campaign_id = $1 AND lower(speaker_name) = lower($2)
       AND glyphoxa_may_read(dm_only, heard_by, $3::text) AND session_id <> ALL($4::text[])
     ORDER BY speaker_id LIMIT 1)
    UNION ALL
    SELECT (SELECT e.speaker_id FROM session_entries e
            WHERE e.campaign_id = $1 AND lower(e.speaker_name) = lower($2)
              AND e.speaker_id > named.speaker_id
              AND glyphoxa_may_read(e.dm_only, e.heard_by, $3::text)
              AND e.session_id <> ALL($4::text[])
            ORDER BY e.speaker_id LIMIT 1)
    FROM named WHERE named.speaker_id IS NOT NULL
)
SELECT speaker_id FROM (
    SELECT speaker_id FROM named WHERE speaker_id IS NOT NULL
    UNION
    SELECT $2 WHERE EXISTS (
        SELECT FROM session_entries
        WHERE campaign_id = $1 AND speaker_id = $2
          AND glyphoxa_may_read(dm_only, heard_by, $3::text) AND session_id <> ALL($4::text[])
    )
) found
WHERE speaker_id <> ALL($5::text[])
ORDER BY speaker_id
"""
SELECT_LATEST_SESSION = """
SELECT session_id FROM session_entries
WHERE campaign_id = $1 AND session_id <> ALL($2::text[])
ORDER BY spoken_at DESC, id DESC LIMIT 1
"""
# The DM's own hearers for lines (NULL: those of their scene again); the triggers of sql/032
# make heard_by and the passages' follow.
SET_HEARERS = f"""
UPDATE session_entries e SET heard_by_dm = $3
WHERE e.campaign_id = $1 AND e.id = ANY($2::bigint[])
RETURNING {ENTRY_COLUMNS}, e.heard_by
"""
SELECT_HEARERS = """
SELECT id, heard_by FROM session_entries WHERE campaign_id = $1 AND session_id = $2
"""
SET_DM_ONLY = f"""
UPDATE session_entries e SET dm_only = $3
WHERE e.campaign_id = $1 AND e.id = ANY($2::bigint[])
RETURNING {ENTRY_COLUMNS}
"""
# Lines kept back ($3) or given back: the NPCs who heard them stop or start reading them,
# and their subscribers are told as sql/034 tells of a change of hearers.
NOTIFY_HEARERS = """
SELECT glyphoxa_notify_hearers(
    $1, s.session_id,
    CASE WHEN $3 THEN '{}' ELSE s.hearers END,
    CASE WHEN $3 THEN s.hearers ELSE '{}' END,
    s.everyone
)
FROM (
    SELECT e.session_id, glyphoxa_sorted_set(array_agg(h)) AS hearers,
           bool_or(e.heard_by IS NULL) AS everyone
    FROM session_entries e LEFT JOIN LATERAL unnest(e.heard_by) h ON true
    WHERE e.campaign_id = $1 AND e.id = ANY($2::bigint[])
    GROUP BY e.session_id
) s
"""
# Passages holding the lines: DM-only while any of their lines is.
RESET_CHUNKS_DM_ONLY = """
UPDATE chunks c SET dm_only = glyphoxa_chunk_dm_only(c.campaign_id, c.session_id, c.entry_ids)
WHERE c.campaign_id = $1 AND c.session_id = ANY($2::text[])
"""
# One statement for a session's corrections: its triggers then move the words of all the
# changed lines at once (sql/024).
UPDATE_CORRECTED = """
UPDATE session_entries e SET text = u.text, corrections = c.corrections
FROM unnest($2::bigint[], $3::text[], $4::text[]) AS u(id, text, corrections_json),
     LATERAL (SELECT u.corrections_json::jsonb AS corrections) c
WHERE e.campaign_id = $1 AND e.id = u.id
  AND (e.text <> u.text OR e.corrections IS DISTINCT FROM c.corrections)
"""
SELECT_UNEXTRACTED = f"""
SELECT {ENTRY_COLUMNS} FROM session_entries e
WHERE e.campaign_id = $1 AND e.session_id = $2 AND NOT e.extracted
ORDER BY e.spoken_at, e.id
"""
MARK_EXTRACTED = """
UPDATE session_entries SET extracted = true
WHERE campaign_id = $1 AND id = ANY($2::bigint[]) AND NOT extracted
"""
# When the NPC $3 spoke in the session (as sql/032's glyphoxa_line_npc has it: the line's NPC,
# or its speaker's id), and when the session's first line was spoken.
SELECT_SPOKEN_BY = """
SELECT (SELECT min(spoken_at) FROM session_entries
        WHERE campaign_id = $1 AND session_id = $2) AS first_line_at,
       ARRAY(SELECT spoken_at FROM session_entries
             WHERE campaign_id = $1 AND session_id = $2
               AND (npc_id = $3 OR (npc_id IS NULL AND speaker_id = $3))
             ORDER BY spoken_at) AS spoke_at,
       ARRAY(SELECT spoken_at FROM session_entries
             WHERE campaign_id = $1 AND session_id = $2 AND heard_by_dm IS NOT NULL
               AND NOT dm_only AND NOT ($3 = ANY(heard_by))
             ORDER BY spoken_at) AS unheard_at
"""
SELECT_SESSION_ENTRIES = f"""
SELECT {ENTRY_COLUMNS} FROM session_entries e
WHERE e.campaign_id = $1 AND e.session_id = $2
ORDER BY e.spoken_at, e.id
"""


def source_key_of(entry: NewEntry) -> str:
    """The same utterance (time, speaker, words heard) always gets the same key."""
    raw = entry.raw_text if entry.raw_text is not None else entry.text
    material = f"{entry.spoken_at.isoformat()}\x1f{entry.speaker_id}\x1f{raw}"
    return hashlib.sha256(material.encode()).hexdigest()[:32]


def _entry(row: asyncpg.Record) -> Entry:
    return Entry(**{key: row[key] for key in Entry.model_fields})


def _record(entry: NewEntry, ordinal: int) -> tuple[object, ...]:
    return (
        entry.source_key or source_key_of(entry),
        entry.speaker_id,
        entry.speaker_name,
        entry.text,
        entry.raw_text if entry.raw_text is not None else entry.text,
        entry.npc_id,
        entry.spoken_at,
        entry.duration_ms,
        # COPY is binary and jsonb has a text codec here, so words travel as JSON text.
        json.dumps([w.model_dump() for w in entry.words]) if entry.words is not None else None,
        json.dumps([c.model_dump() for c in entry.corrections]),
        ordinal,
    )


class SessionLog:
    """The transcript of one campaign's sessions."""

    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def append(self, session_id: str, entry: NewEntry) -> Entry:
        """Store one utterance; appending the same utterance again returns the stored one."""
        ((stored, _new),) = await self.record(session_id, [entry])
        return stored

    async def record(
        self,
        session_id: str,
        entries: Sequence[NewEntry],
        progress: WriteProgress | None = None,
    ) -> list[tuple[Entry, bool]]:
        """Store utterances in one transaction; for each, in order, the stored entry and
        whether it is new (an utterance sent again keeps what was stored first). `progress`
        is told when the commit is about to be sent (see `write_within`)."""
        keys = [entry.source_key or source_key_of(entry) for entry in entries]
        with driver_errors(f"store {len(entries)} entries in session {session_id!r}"):
            async with self._pool.acquire() as conn, conn.transaction():
                added = set(await self._append(conn, session_id, entries))
                rows = await conn.fetch(SELECT_BY_KEYS, self.campaign_id, session_id, keys)
                if progress is not None:
                    progress.commit_sent = True  # the block's end commits
        by_key = {row["source_key"]: _entry(row) for row in rows}
        recorded = []
        for key in keys:
            entry = by_key[key]
            recorded.append((entry, entry.id in added))
            added.discard(entry.id)  # the same utterance twice in one call is new once
        return recorded

    async def append_many(self, session_id: str, entries: Sequence[NewEntry]) -> list[int]:
        """Store many utterances in one COPY; returns the ids of those not stored before."""
        if not entries:
            return []
        with driver_errors(f"store {len(entries)} entries in session {session_id!r}"):
            async with self._pool.acquire() as conn, conn.transaction():
                return await self._append(conn, session_id, entries)

    async def _append(
        self, conn: asyncpg.Connection, session_id: str, entries: Sequence[NewEntry]
    ) -> list[int]:
        records = [_record(entry, ordinal) for ordinal, entry in enumerate(entries)]
        await conn.execute(CREATE_INCOMING)
        await conn.copy_records_to_table("incoming_entries", records=records, columns=COPY_COLUMNS)
        rows = await conn.fetch(INSERT_INCOMING, self.campaign_id, session_id)
        # ON COMMIT DROP waits for the outermost commit; a caller's transaction may append
        # again before that.
        await conn.execute("DROP TABLE incoming_entries")
        return [row["id"] for row in rows]

    async def recent(
        self,
        session_id: str,
        *,
        window: timedelta = timedelta(minutes=5),
        until: datetime | None = None,
        limit: int = 500,
        reader: str | None = None,
    ) -> list[Entry]:
        """The session's last `window` of talk (ending at `until`, or its latest entry), oldest
        first, at most `limit` entries; of those `reader` may read (None: the DM, all)."""
        if window <= timedelta(0):
            raise InvalidInputError("The window must be longer than zero.", field="window")
        with driver_errors(f"read the recent transcript of session {session_id!r}"):
            rows = await self._pool.fetch(
                SELECT_RECENT, self.campaign_id, session_id, until, window, limit, reader
            )
        return [_entry(row) for row in rows]

    async def entries(self, session_id: str) -> list[Entry]:
        with driver_errors(f"read session {session_id!r}"):
            rows = await self._pool.fetch(SELECT_SESSION_ENTRIES, self.campaign_id, session_id)
        return [_entry(row) for row in rows]

    async def spoken_by(self, session_id: str, npc_id: str) -> SpokenBy:
        """When the session's first line was spoken, when `npc_id` spoke in it, and when the
        lines the DM kept from it were said (those whose hearers the DM chose: in a scene it
        was at, the only lines it does not hear; the DM's own lines aside)."""
        with driver_errors(f"read when {npc_id!r} spoke in session {session_id!r}"):
            row = await self._pool.fetchrow(SELECT_SPOKEN_BY, self.campaign_id, session_id, npc_id)
        assert row is not None, "a row of subqueries"
        return SpokenBy(row["first_line_at"], list(row["spoke_at"]), list(row["unheard_at"]))

    async def unextracted(self, session_id: str) -> list[Entry]:
        """The session's lines the LLM has not read for knowledge yet, in spoken order."""
        with driver_errors(f"read session {session_id!r}"):
            rows = await self._pool.fetch(SELECT_UNEXTRACTED, self.campaign_id, session_id)
        return [_entry(row) for row in rows]

    async def mark_extracted(self, entry_ids: Sequence[int]) -> None:
        with driver_errors("mark lines as read by the LLM"):
            await self._pool.execute(MARK_EXTRACTED, self.campaign_id, list(entry_ids))

    async def set_corrected(
        self, updates: Sequence[tuple[int, str, Sequence[TextCorrection]]]
    ) -> None:
        """Store each entry's corrected text and the corrections that made it from raw_text."""
        if not updates:
            return
        ids, texts, corrections = zip(*updates, strict=True)
        # As JSON text: asyncpg would take a list of lists for a two-dimensional array.
        stored = [json.dumps([c.model_dump() for c in spans]) for spans in corrections]
        with driver_errors("store corrected utterances"):
            await self._pool.execute(
                UPDATE_CORRECTED, self.campaign_id, list(ids), list(texts), stored
            )

    async def get_many(self, entry_ids: Sequence[int]) -> list[Entry]:
        with driver_errors("read entries"):
            rows = await self._pool.fetch(SELECT_BY_IDS, self.campaign_id, list(entry_ids))
        return [_entry(row) for row in rows]

    async def neighbour_texts(
        self, entry_ids: Collection[int]
    ) -> dict[int, tuple[str | None, str | None]]:
        """For each line, the text of the line spoken just before it in its session and of
        the one just after (None at either end)."""
        if not entry_ids:
            return {}
        with driver_errors("read the lines around entries"):
            rows = await self._pool.fetch(SELECT_NEIGHBOURS, self.campaign_id, list(entry_ids))
        return {row["id"]: (row["before"], row["after"]) for row in rows}

    async def latest_session_id(self, skipping: Collection[str] = ()) -> str | None:
        """The session with the most recent utterance (the one being played), of those not
        in `skipping`."""
        with driver_errors("find the current session"):
            latest: str | None = await self._pool.fetchval(
                SELECT_LATEST_SESSION, self.campaign_id, list(skipping)
            )
            return latest

    def _all_found(self, ids: Sequence[int], rows: Sequence[asyncpg.Record]) -> None:
        """Refuses (so the transaction writing `rows` rolls back) when an id asked for is not
        a line of this campaign."""
        missing = sorted(set(ids) - {row["id"] for row in rows})
        if missing:
            raise NotFoundError(
                f"No line {', '.join(f'line:{i}' for i in missing[:5])} in campaign "
                f"{self.campaign_id!r}. `glyphoxa-mcp session show SESSION` lists the "
                "lines with their ids."
            )

    async def set_dm_only(self, entry_ids: Sequence[int], dm_only: bool) -> list[Entry]:
        """Make these lines DM-only (or not), with the passages that hold them; the lines
        changed. An id that is not a line of this campaign is refused, and nothing changes."""
        ids = sorted(set(entry_ids))
        with driver_errors("mark lines DM-only"):
            async with self._pool.acquire() as conn, conn.transaction():
                rows = await conn.fetch(SET_DM_ONLY, self.campaign_id, ids, dm_only)
                self._all_found(ids, rows)
                sessions = sorted({row["session_id"] for row in rows})
                await conn.execute(RESET_CHUNKS_DM_ONLY, self.campaign_id, sessions)
                await conn.execute(NOTIFY_HEARERS, self.campaign_id, ids, dm_only)
        return [_entry(row) for row in rows]

    async def set_hearers(
        self, entry_ids: Sequence[int], npc_ids: Sequence[str] | None
    ) -> list[tuple[Entry, tuple[str, ...] | None]]:
        """The DM says who heard these lines (`npc_ids`; None: those present in their scene
        again); each line with who hears it now (None: everyone, a shared campaign). An id
        that is not a line of this campaign is refused, and nothing changes."""
        ids = sorted(set(entry_ids))
        hearers = None if npc_ids is None else sorted(set(npc_ids))
        with driver_errors("set who heard lines"):
            async with self._pool.acquire() as conn, conn.transaction():
                rows = await conn.fetch(SET_HEARERS, self.campaign_id, ids, hearers)
                self._all_found(ids, rows)
        return [
            (_entry(row), None if row["heard_by"] is None else tuple(row["heard_by"]))
            for row in sorted(rows, key=lambda r: (r["spoken_at"], r["id"]))
        ]

    async def hearers(self, session_id: str) -> dict[int, tuple[str, ...] | None]:
        """Who hears each line of the session (None: everyone, a shared campaign)."""
        with driver_errors(f"read who heard session {session_id!r}"):
            rows = await self._pool.fetch(SELECT_HEARERS, self.campaign_id, session_id)
        return {
            row["id"]: None if row["heard_by"] is None else tuple(row["heard_by"]) for row in rows
        }

    async def speaker_ids(
        self,
        speaker: str,
        *,
        reader: str | None = None,
        skipping: Collection[str] = (),
        hiding: Collection[str] = (),
    ) -> list[str]:
        """The ids of speakers known by this id or (case-insensitively) this name, by the
        lines of sessions not in `skipping` that `reader` may read (None: the DM, all); none
        of the ids in `hiding`."""
        with driver_errors("look up a speaker"):
            rows = await self._pool.fetch(
                SELECT_SPEAKERS,
                self.campaign_id,
                speaker.strip(),
                reader,
                sorted(skipping),
                sorted(hiding),
            )
        return [row["speaker_id"] for row in rows]

    async def search(
        self, query: str, filters: SearchFilters = NO_FILTERS, limit: int = 10
    ) -> list[EntryMatch]:
        """Entries sharing words with the query, most relevant first (BM25 `rank`)."""
        params = Params(self.campaign_id)
        text = params.add(checked_query(query))
        search = WordSearch(
            table="session_entries",
            alias="e",
            columns=ENTRY_COLUMNS,
            conditions=entry_conditions(filters, params, "e"),
            selective=filters.session_id is not None,
            filter_first=filters.reader is not None,
            reader=None if filters.reader is None else params.add(filters.reader),
            query=text,
            limit=params.add(limit),
            k=limit,
        )
        with driver_errors("search the session log"):
            rows = await rank_by_words(self._pool, search, params)
        return [EntryMatch(entry=_entry(row), rank=row["rank"]) for row in rows]
