"""A session's scenes (sql/031): when each started, where, and the NPCs present."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.scenes import Scene

COLUMNS = "session_id, started_at, location_id, present, title, word"
# A scene is its session and its start: recording it again replaces what it says. All in
# one statement, so that the triggers placing each line in its scene see every new scene at
# once (one at a time, a line of the second would first be placed in the first).
RECORD_SCENES = """
INSERT INTO scenes (campaign_id, session_id, started_at, location_id, present, title)
SELECT $1, s.session_id, s.started_at, s.location_id,
       ARRAY(SELECT jsonb_array_elements_text(s.present)), s.title
FROM jsonb_to_recordset($2::jsonb)
     AS s(session_id text, started_at timestamptz, location_id text, present jsonb, title text)
ON CONFLICT (campaign_id, session_id, started_at) DO UPDATE SET
    location_id = EXCLUDED.location_id, present = EXCLUDED.present, title = EXCLUDED.title
"""
SELECT_SCENES = f"""
SELECT {COLUMNS} FROM scenes WHERE campaign_id = $1 AND session_id = $2 ORDER BY started_at
"""
# The same, each scene's word narrowed to whether it reached the NPC `$3` (a central
# scene's word names hundreds of NPCs, each made a value to read it whole).
SELECT_SCENES_WORD_OF = """
SELECT session_id, started_at, location_id, present, title,
       CASE WHEN word ? $3 THEN jsonb_build_object($3::text, word -> $3) END AS word
FROM scenes WHERE campaign_id = $1 AND session_id = $2 ORDER BY started_at
"""

DELETE_SCENE = """
DELETE FROM scenes WHERE campaign_id = $1 AND session_id = $2 AND started_at = $3
"""


def _scene(row: asyncpg.Record) -> Scene:
    return Scene(
        session_id=row["session_id"],
        started_at=row["started_at"],
        location_id=row["location_id"],
        present=tuple(row["present"]),
        title=row["title"],
        word=tuple(sorted((row["word"] or {}).items())),
    )


class Scenes:
    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def record(self, scenes: Sequence[Scene]) -> None:
        """Store scenes (in one transaction), each replacing one of its session and start."""
        if not scenes:
            return
        # One row per scene: the last given for a start wins, as recording it again would.
        latest = {(scene.session_id, scene.started_at): scene for scene in scenes}
        rows = [
            {
                "session_id": scene.session_id,
                "started_at": scene.started_at.isoformat(),
                "location_id": scene.location_id,
                "present": list(scene.present),
                "title": scene.title,
            }
            for scene in latest.values()
        ]
        with driver_errors(f"store {len(rows)} scenes"):
            await self._pool.execute(RECORD_SCENES, self.campaign_id, rows)

    async def of_session(self, session_id: str, *, word_of: str | None = None) -> list[Scene]:
        """The session's scenes, in the order they started; with `word_of`, each scene's
        `word` says only whether word of it reached that NPC, and from whom."""
        with driver_errors(f"read the scenes of session {session_id!r}"):
            if word_of is None:
                rows = await self._pool.fetch(SELECT_SCENES, self.campaign_id, session_id)
            else:
                rows = await self._pool.fetch(
                    SELECT_SCENES_WORD_OF, self.campaign_id, session_id, word_of
                )
        return [_scene(row) for row in rows]

    async def remove(self, session_id: str, started_at: datetime) -> bool:
        """Remove the scene of the session that started at `started_at`: its lines belong
        to the scene before it (or to none). Whether there was one."""
        with driver_errors(f"remove a scene of session {session_id!r}"):
            status = await self._pool.execute(
                DELETE_SCENE, self.campaign_id, session_id, started_at
            )
        return bool(status.endswith(" 1"))
