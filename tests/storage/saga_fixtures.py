"""A campaign with a history, for forking and deleting (tests/storage/test_branches.py,
test_deletion.py, tests/cli/test_branch_commands.py).

Campaign 'ashfall' (made by `seeded_database`, with its session 's1'), played over two
sessions a week apart, with a fixed timeline of when each row was stored:

- 2026-01-01, the campaign file: Mira, Vask, the Red Kettle (Mira works there), the DM's
  fact about salt-bread; a lore document (when the schema has the library), which Mira is
  given to know after the later session.
- 2026-01-05, session s1 ("The Red Kettle"): six lines, one of them (`FORGOTTEN`) the
  line a test forgets; learned in it: "Mira hides a key under the bar." (stated, not
  confirmed) and Vask knows Mira; ended offline (summary, episode, participation).
- 2026-01-12, session `LATER` ("Harbour night"): learned in it: Vask owes the harbour guild
  (not confirmed), Vask served in the northern war (the DM confirmed it), the Pale King (an
  entity first named that night) rules the drowned city; a proposal held for review; ended.
- 2026-01-13, the DM: retcons the key to the cellar; adds "The harbour closes at dusk.";
  makes an access token.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import asyncpg

from glyphoxa_mcp.db.database import Database, DatabaseLocation, init_connection, keep_session
from glyphoxa_mcp.domain.models import (
    Entry,
    NewEntity,
    NewEntry,
    NewFact,
    NewRelationship,
    Provenance,
)
from glyphoxa_mcp.domain.viewer import Viewer, ViewerKind
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.pipeline.finish import end_session
from glyphoxa_mcp.pipeline.ingest import ingest_entries
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.conftest import DatabaseFactory, PostgresForTests, seeded_database

CAMPAIGN = "ashfall"
FIRST = "s1"
LATER = "zq-harbour-night"
DIMENSION = 256
FORGOTTEN = "Mira promised the xylophonist a zebrawood reward in secret."
# Words of the forgotten line found nowhere else in the campaign.
FORGOTTEN_WORDS = ("xylophonist", "zebrawood")
RETCONNED = "Mira hides a key under the bar."
RETCON = "Mira hides a key in the cellar."
LATER_FACTS = (
    "Vask owes the harbour guild forty crowns.",
    "Vask served in the northern war.",
    "The Pale King rules the drowned city.",
)
LATE_DM_FACT = "The harbour closes at dusk."
EARLY_DM_FACT = "The Red Kettle bakes salt-bread at dawn."
PALE_KING = "pale-king"

LOADED = datetime(2026, 1, 1, 12, tzinfo=UTC)
FIRST_NIGHT = datetime(2026, 1, 5, 19, tzinfo=UTC)
LATER_NIGHT = datetime(2026, 1, 12, 19, tzinfo=UTC)
DM_EDITS = datetime(2026, 1, 13, 10, tzinfo=UTC)

FIRST_LINES = (
    ("p1", "Kael", "We push open the door of the Red Kettle."),
    ("mira", "Mira", "Welcome, travellers, sit by the fire."),
    ("p1", "Kael", "Have you seen Captain Vask tonight?"),
    ("mira", "Mira", FORGOTTEN),
    ("p2", "Brin", "I order a bowl of salt-bread and listen."),
    ("mira", "Mira", "Vask comes in at dusk, always alone."),
)
LATER_LINES = (
    ("p1", "Kael", "The harbour stinks of tar and fish."),
    ("vask", "Vask", "I owe the harbour guild forty crowns, do not tell Mira."),
    ("p2", "Brin", "They say the Pale King rules the drowned city."),
    ("vask", "Vask", "I served in the northern war, I have seen worse."),
)


def _entries(lines: tuple[tuple[str, str, str], ...], start: datetime) -> list[NewEntry]:
    return [
        NewEntry(
            speaker_id=speaker_id,
            speaker_name=name,
            text=text,
            npc_id=speaker_id if speaker_id in ("mira", "vask") else None,
            spoken_at=start + timedelta(seconds=20 * number),
        )
        for number, (speaker_id, name, text) in enumerate(lines)
    ]


def _learned(
    session_id: str, confidence: float, confirmed: bool = False, line: Entry | None = None
) -> Provenance:
    return Provenance(
        session_id=session_id,
        confidence=confidence,
        source="stated",
        dm_confirmed=confirmed,
        entry_id=line.id if line else None,
    )


async def seed_saga(memory: CampaignMemory, embedder: Embedder) -> None:
    db, graph = memory.db, memory.graph
    for entity in (
        NewEntity(id="mira", type=EntityType.NPC, name="Mira"),
        NewEntity(id="vask", type=EntityType.NPC, name="Vask", aliases=("Captain Vask",)),
        NewEntity(id="kettle", type=EntityType.LOCATION, name="The Red Kettle"),
    ):
        await graph.upsert_entity(entity)
    await graph.upsert_relationship(
        NewRelationship(source_id="mira", target_id="kettle", rel_type="WORKS_AT")
    )
    await graph.upsert_fact(NewFact(subject_id="kettle", text=EARLY_DM_FACT))

    await ingest_entries(db, CAMPAIGN, FIRST, _entries(FIRST_LINES, FIRST_NIGHT))
    # Cited as extraction cites them: the key by the forgotten line, Vask by the last.
    first_lines = await memory.log.entries(FIRST)
    await graph.propose_fact(
        NewFact(
            subject_id="mira",
            text=RETCONNED,
            session_id=FIRST,
            provenance=_learned(FIRST, 0.6, line=first_lines[3]),
        )
    )
    await graph.propose_relationship(
        NewRelationship(source_id="vask", target_id="mira", rel_type="KNOWS",
                        provenance=_learned(FIRST, 0.9, line=first_lines[-1]))
    )  # fmt: skip
    await end_session(db, CAMPAIGN, FIRST, embedder)

    await ingest_entries(
        db, CAMPAIGN, LATER, _entries(LATER_LINES, LATER_NIGHT), title="Harbour night"
    )
    await graph.upsert_entity(NewEntity(id=PALE_KING, type=EntityType.NPC, name="The Pale King"))
    owes, served, rules = LATER_FACTS
    owed = (await memory.log.entries(LATER))[1]
    for subject, text, provenance in (
        ("vask", owes, _learned(LATER, 0.6, line=owed)),
        ("vask", served, _learned(LATER, 0.6, confirmed=True)),
        (PALE_KING, rules, _learned(LATER, 0.9)),
    ):
        await graph.propose_fact(
            NewFact(subject_id=subject, text=text, session_id=LATER, provenance=provenance)
        )
    await memory.pending.propose(
        "session",
        f"{LATER}:grey-lady",
        NewEntity(id="grey-lady", type=EntityType.NPC, name="Grey Lady"),
    )
    await end_session(db, CAMPAIGN, LATER, embedder)

    retconned = next(f for f in await graph.current_facts() if f.text == RETCONNED)
    await memory.curation.retcon(retconned.id, RETCON)
    await graph.upsert_fact(NewFact(text=LATE_DM_FACT))
    await AccessTokens(db).create(Viewer(campaign=CAMPAIGN, kind=ViewerKind.NPC, npc_id="mira"))
    await embed_new(db, embedder, CAMPAIGN)
    await _add_lore(db, embedder)
    await _set_timeline(db)


LORE = "The drowned city sank beneath the bay in the year of ash."
LORE_HEADING = "The drowned city"


async def _add_lore(db: Database, embedder: Embedder) -> None:
    """A document of the lore library (sql/028) with one section, pinned to Mira after the
    later session; written as rows, for a schema that may not have the library."""
    if not await db.pool.fetchval("SELECT to_regclass('lore_documents') IS NOT NULL"):
        return
    (vector,) = await embedder.embed([LORE])
    await db.pool.execute(
        """
        INSERT INTO lore_documents (campaign_id, id, title, source_kind, source_name, checksum,
                                    added_at, updated_at)
        VALUES ($1, 'history', 'History', 'markdown', 'history.md', 'sum', $2, $2)
        """,
        CAMPAIGN, LOADED,
    )  # fmt: skip
    await db.pool.execute(
        """
        INSERT INTO lore_sections (campaign_id, document_id, ordinal, heading, text, embedding)
        VALUES ($1, 'history', 0, $2, $3, $4)
        """,
        CAMPAIGN, LORE_HEADING, LORE, vector,
    )  # fmt: skip
    await db.pool.execute(
        "INSERT INTO lore_pins (campaign_id, npc_id, document_id, heading, pinned_at) "
        "VALUES ($1, 'mira', 'history', $2, $3)",
        CAMPAIGN, LORE_HEADING, LATER_NIGHT + timedelta(hours=5),
    )  # fmt: skip


async def _set_timeline(db: Database) -> None:
    """When each row was stored, as the module tells it."""
    first, later = FIRST_NIGHT + timedelta(hours=4), LATER_NIGHT + timedelta(hours=4)
    await db.pool.execute(
        "UPDATE sessions SET created_at = CASE id WHEN $2 THEN $3::timestamptz ELSE $4 END "
        "WHERE campaign_id = $1",
        CAMPAIGN, FIRST, FIRST_NIGHT, LATER_NIGHT,
    )  # fmt: skip
    await db.pool.execute(
        """
        UPDATE entities SET created_at = CASE
            WHEN id = $4 OR attributes ->> 'session_id' = $3 THEN $6::timestamptz
            WHEN attributes ->> 'session_id' = $2 THEN $5
            ELSE $7 END
        WHERE campaign_id = $1
        """,
        CAMPAIGN, FIRST, LATER, PALE_KING, first, later, LOADED,
    )  # fmt: skip
    await db.pool.execute(
        """
        UPDATE relationships SET created_at = CASE provenance ->> 'session_id'
            WHEN $2 THEN $4::timestamptz WHEN $3 THEN $5 ELSE $6 END
        WHERE campaign_id = $1
        """,
        CAMPAIGN, FIRST, LATER, first, later, LOADED,
    )  # fmt: skip
    await db.pool.execute(
        """
        UPDATE facts SET created_at = CASE
            WHEN text = ANY($7::text[]) THEN $8::timestamptz
            WHEN session_id = $2 THEN $4 WHEN session_id = $3 THEN $5
            ELSE $6 END
        WHERE campaign_id = $1
        """,
        CAMPAIGN, FIRST, LATER, first, later, LOADED, [RETCON, LATE_DM_FACT], DM_EDITS,
    )  # fmt: skip
    await db.pool.execute(
        "UPDATE pending_entities SET created_at = $2 WHERE campaign_id = $1", CAMPAIGN, later
    )


@contextlib.asynccontextmanager
async def clone_of(
    databases: DatabaseFactory, seeded_dsn: str, dimension: int = DIMENSION
) -> AsyncIterator[Database]:
    """A database of the test's own, cloned from the seeded one (of `dimension`)."""
    name = await databases.take(urlsplit(seeded_dsn).path.lstrip("/"))
    dsn = databases.server.dsn(name)
    pool = await asyncpg.create_pool(
        dsn, min_size=1, max_size=4, init=init_connection, reset=keep_session
    )
    try:
        yield Database(pool, DatabaseLocation(dsn, name), dimension)
    finally:
        await pool.close()
        databases.drop(name)


_SEEDED: dict[str, str] = {}


def saga_dsn(server: PostgresForTests, embedder: Embedder) -> str:
    """The seeded saga's DSN, seeded once per run for every module that clones it."""
    if server.template_256 not in _SEEDED:

        async def seed(memory: CampaignMemory) -> None:
            await seed_saga(memory, embedder)

        _SEEDED[server.template_256] = seeded_database(
            server, server.template_256, DIMENSION, seed, shared_as="saga"
        )
    return _SEEDED[server.template_256]
