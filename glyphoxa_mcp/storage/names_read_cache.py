"""What name correction read in texts, kept by the digest of the names and the text
(sql/039, recall/names_read.py): a cache any process of the campaign shares."""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors

SELECT_READ = """
SELECT reading, entity_ids FROM names_read
WHERE campaign_id = $1 AND reading = ANY($2::bytea[])
"""
# The entity ids of each reading come as one JSON list of lists: lists of lists of several
# lengths are no array.
INSERT_READ = """
INSERT INTO names_read (campaign_id, reading, names_digest, entity_ids)
SELECT $1, r.reading, $2, ARRAY(SELECT jsonb_array_elements_text(i.ids))
FROM unnest($3::bytea[]) WITH ORDINALITY AS r(reading, n)
     JOIN jsonb_array_elements($4::jsonb) WITH ORDINALITY AS i(ids, n) USING (n)
ON CONFLICT (campaign_id, reading) DO NOTHING
"""
DELETE_OTHER_NAMES = "DELETE FROM names_read WHERE campaign_id = $1 AND names_digest <> $2"
# In the transaction that deletes a line, a fact or a session: a digest of a deleted text
# with the entities it named would outlive it, so the campaign's rows go whole (they fill
# again as texts are read).
FORGET_CAMPAIGN_NAMES_READ = "DELETE FROM names_read WHERE campaign_id = $1"
# The texts redaction reads in a campaign, a page at a time in id order: its lines (with
# their speakers' names) and its current facts (with their story labels).
SELECT_LINES_AFTER = """
SELECT id, speaker_name, text FROM session_entries
WHERE campaign_id = $1 AND id > $2 ORDER BY id LIMIT $3
"""
SELECT_FACTS_AFTER = """
SELECT id, text, story_label FROM facts
WHERE campaign_id = $1 AND id > $2 AND superseded_by IS NULL ORDER BY id LIMIT $3
"""


class NamesReadCache:
    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def found(self, readings: Sequence[bytes]) -> dict[bytes, tuple[str | None, ...]]:
        """The entity ids kept for these readings (digests), by reading; those not kept are
        left out."""
        if not readings:
            return {}
        with driver_errors("read the names read in texts"):
            rows = await self._pool.fetch(SELECT_READ, self.campaign_id, list(readings))
        return {bytes(row["reading"]): tuple(row["entity_ids"]) for row in rows}

    async def keep(self, names: bytes, read: Sequence[tuple[bytes, Sequence[str | None]]]) -> None:
        """Keep what was read under `names` (the digest of the names and code): (reading,
        entity ids) pairs. A reading kept already stays as it is (it is the same)."""
        if not read:
            return
        with driver_errors("keep the names read in texts"):
            await self._pool.execute(
                INSERT_READ,
                self.campaign_id,
                names,
                [reading for reading, _ in read],
                [list(ids) for _, ids in read],
            )

    async def lines_after(self, after_id: int, limit: int) -> list[tuple[int, str, str]]:
        """(id, speaker's name, text) of the campaign's lines after `after_id`, in id order."""
        with driver_errors("read the campaign's lines"):
            rows = await self._pool.fetch(SELECT_LINES_AFTER, self.campaign_id, after_id, limit)
        return [(row["id"], row["speaker_name"], row["text"]) for row in rows]

    async def facts_after(self, after_id: int, limit: int) -> list[tuple[int, str, str | None]]:
        """(id, text, story label) of the campaign's current facts after `after_id`, in id
        order."""
        with driver_errors("read the campaign's facts"):
            rows = await self._pool.fetch(SELECT_FACTS_AFTER, self.campaign_id, after_id, limit)
        return [(row["id"], row["text"], row["story_label"]) for row in rows]

    async def forget_all_but(self, names: bytes) -> int:
        """Drop what was read under other names than `names`; how many rows went."""
        with driver_errors("forget the names read under old names"):
            status = await self._pool.execute(DELETE_OTHER_NAMES, self.campaign_id, names)
        return int(status.split()[-1])
