"""The DM's corrections to the graph: the review queue, confirming, retconning, secrets."""

from __future__ import annotations

from typing import Literal

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.models import Fact, Visibility
from glyphoxa_mcp.domain.reports import HiddenLearning
from glyphoxa_mcp.domain.review_items import ReviewQueue
from glyphoxa_mcp.domain.vocabulary import BIDIRECTIONAL_TYPES, is_bidirectional
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.storage.knowledge_graph import (
    FACT_COLUMNS,
    RELATIONSHIP_COLUMNS,
    fact_from_row,
    relationship_from_row,
)

ItemKind = Literal["entity", "relationship", "fact"]

REVIEW_RELATIONSHIPS = f"""
SELECT {RELATIONSHIP_COLUMNS} FROM relationships r
WHERE r.campaign_id = $1 AND (r.provenance ->> 'confidence')::numeric < $2
  AND NOT (r.provenance ->> 'dm_confirmed')::boolean
  -- a bidirectional pair is one item: list its first-stored row
  AND NOT EXISTS (
      SELECT 1 FROM relationships twin
      WHERE twin.campaign_id = r.campaign_id AND twin.source_id = r.target_id
        AND twin.target_id = r.source_id AND twin.rel_type = r.rel_type
        AND twin.rel_type = ANY($3::text[]) AND twin.id < r.id)
ORDER BY r.id
"""
REVIEW_FACTS = f"""
SELECT {FACT_COLUMNS} FROM facts f
WHERE f.campaign_id = $1 AND f.superseded_by IS NULL
  AND (f.provenance ->> 'confidence')::numeric < $2
  AND NOT (f.provenance ->> 'dm_confirmed')::boolean
ORDER BY f.id
"""
CONFIRM = """
UPDATE {table}
SET provenance = jsonb_set(provenance, '{{dm_confirmed}}', 'true'), updated_at = now()
WHERE campaign_id = $1 AND id = $2
"""
# A bidirectional relationship is stored twice; both rows change together.
PAIR = """
SELECT t.id FROM relationships r JOIN relationships t
  ON t.campaign_id = r.campaign_id AND t.source_id = r.target_id
 AND t.target_id = r.source_id AND t.rel_type = r.rel_type
WHERE r.campaign_id = $1 AND r.id = $2
"""
SET_VISIBILITY = """
UPDATE {table} SET secret = $3, known_by = $4, updated_at = now()
WHERE campaign_id = $1 AND id = $2
"""
# What was learned in a session (its episode, and the facts and relationships whose
# provenance names it) kept to the DM: an NPC may not know what only a DM-only session says.
HIDE_LEARNED_IN_SESSION = """
WITH episode AS (
    UPDATE entities SET secret = true, known_by = '{}', updated_at = now()
    WHERE campaign_id = $1 AND id = $3 AND NOT (secret AND known_by = '{}')
    RETURNING id
), learned_facts AS (
    UPDATE facts SET secret = true, known_by = '{}', updated_at = now()
    WHERE campaign_id = $1 AND (session_id = $2 OR provenance ->> 'session_id' = $2)
      AND NOT (secret AND known_by = '{}')
    RETURNING id
), learned_relationships AS (
    UPDATE relationships SET secret = true, known_by = '{}', updated_at = now()
    WHERE campaign_id = $1 AND provenance ->> 'session_id' = $2
      AND NOT (secret AND known_by = '{}')
    RETURNING id
)
SELECT (SELECT count(*) FROM episode) AS episodes,
       (SELECT count(*) FROM learned_facts) AS facts,
       (SELECT count(*) FROM learned_relationships) AS relationships
"""
RETCON_NEW = f"""
INSERT INTO facts (campaign_id, subject_id, text, session_id, story_day, story_label,
                   occurred_at, provenance, source_entry_id, secret, known_by)
SELECT campaign_id, subject_id, $3, session_id, story_day, story_label, occurred_at,
       jsonb_build_object('session_id', provenance -> 'session_id', 'timestamp', now(),
                          'confidence', 1.0, 'source', 'dm', 'dm_confirmed', true),
       source_entry_id, secret, known_by
FROM facts WHERE campaign_id = $1 AND id = $2 AND superseded_by IS NULL
RETURNING {FACT_COLUMNS.replace("f.", "")}
"""
RETIRE = (
    "UPDATE facts SET superseded_by = $3, updated_at = now() WHERE campaign_id = $1 AND id = $2"
)
HISTORY = f"""
WITH RECURSIVE chain AS (
    SELECT f.* FROM facts f WHERE f.campaign_id = $1 AND f.id = $2
    UNION ALL
    SELECT older.* FROM facts older JOIN chain ON older.superseded_by = chain.id
    WHERE older.campaign_id = $1
)
SELECT {FACT_COLUMNS} FROM chain f ORDER BY f.id
"""


class Curation:
    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def review_queue(self, threshold: float) -> ReviewQueue:
        """What is below the confidence threshold and not yet confirmed by the DM."""
        with driver_errors("read the review queue"):
            rels = await self._pool.fetch(
                REVIEW_RELATIONSHIPS, self.campaign_id, threshold, list(BIDIRECTIONAL_TYPES)
            )
            facts = await self._pool.fetch(REVIEW_FACTS, self.campaign_id, threshold)
        return ReviewQueue(
            relationships=tuple(relationship_from_row(r) for r in rels),
            facts=tuple(fact_from_row(f) for f in facts),
        )

    async def _ids(self, kind: ItemKind, item_id: str | int) -> list[str | int]:
        """The rows one item is stored as: a bidirectional relationship is two."""
        if kind != "relationship":
            return [item_id]
        twins = await self._pool.fetch(PAIR, self.campaign_id, item_id)
        row = await self._pool.fetchrow(
            "SELECT rel_type FROM relationships WHERE campaign_id = $1 AND id = $2",
            self.campaign_id,
            item_id,
        )
        if row is None:
            return []
        extra = [t["id"] for t in twins] if is_bidirectional(row["rel_type"]) else []
        return [item_id, *extra]

    async def confirm(self, kind: Literal["relationship", "fact"], item_id: int) -> None:
        table = "relationships" if kind == "relationship" else "facts"
        with driver_errors(f"confirm {kind} {item_id}"):
            ids = await self._ids(kind, item_id)
            changed = [
                await self._pool.execute(CONFIRM.format(table=table), self.campaign_id, i)
                for i in ids
            ]
        if not ids or changed[0].endswith(" 0"):
            raise NotFoundError(f"No {kind} {item_id} in campaign {self.campaign_id!r}.")

    async def set_visibility(
        self, kind: ItemKind, item_id: str | int, visibility: Visibility
    ) -> None:
        table = {"entity": "entities", "relationship": "relationships", "fact": "facts"}[kind]
        with driver_errors(f"change who knows {kind} {item_id}"):
            ids = await self._ids(kind, item_id)
            changed = [
                await self._pool.execute(
                    SET_VISIBILITY.format(table=table),
                    self.campaign_id,
                    i,
                    visibility.secret,
                    list(visibility.known_by),
                )
                for i in ids
            ]
        if not ids or changed[0].endswith(" 0"):
            raise NotFoundError(f"No {kind} {item_id} in campaign {self.campaign_id!r}.")

    async def hide_learned_in(self, session_id: str, episode_id: str) -> HiddenLearning:
        """Make the session's episode, and every fact and relationship learned in it, secret
        to every NPC."""
        with driver_errors(f"keep what session {session_id!r} taught to the DM"):
            row = await self._pool.fetchrow(
                HIDE_LEARNED_IN_SESSION, self.campaign_id, session_id, episode_id
            )
        assert row is not None, "an aggregate returns a row"
        return HiddenLearning(**dict(row))

    async def teach_witnessed(self, session_id: str) -> int:
        """In a witnessed campaign, make what the session's scenes taught known to those
        present and to those word of it reached (sql/032, glyphoxa_teach_session); what the
        DM decided about is left alone. How many facts and relationships were taught."""
        with driver_errors(f"teach what session {session_id!r} taught its witnesses"):
            taught = await self._pool.fetchval(
                "SELECT glyphoxa_teach_session($1, $2)", self.campaign_id, session_id
            )
        return int(taught)

    async def retcon(self, fact_id: int, text: str) -> Fact:
        """Replace a fact's text; the old version stays as history and is no longer served."""
        with driver_errors(f"retcon fact {fact_id}"):
            async with self._pool.acquire() as conn, conn.transaction():
                row = await conn.fetchrow(RETCON_NEW, self.campaign_id, fact_id, text)
                if row is None:
                    raise NotFoundError(
                        f"No current fact {fact_id} in campaign {self.campaign_id!r} (a fact "
                        "that was already retconned is history; retcon its newest version)."
                    )
                await conn.execute(RETIRE, self.campaign_id, fact_id, row["id"])
        return fact_from_row(row)

    async def history(self, fact_id: int) -> list[Fact]:
        """A fact and every version it replaced, oldest first."""
        with driver_errors(f"read the history of fact {fact_id}"):
            rows = await self._pool.fetch(HISTORY, self.campaign_id, fact_id)
        if not rows:
            raise NotFoundError(f"No fact {fact_id} in campaign {self.campaign_id!r}.")
        return [fact_from_row(row) for row in rows]
