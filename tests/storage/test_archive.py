"""Campaign archives (storage/archive.py): what an export holds, read from the catalog; an
import into an empty database exported again gives the same bytes; an import beside the
original takes new ids; what an import refuses leaves nothing behind."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.errors import ConfigurationError, ConflictError, InvalidInputError
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder
from glyphoxa_mcp.storage.archive import (
    DERIVED_TABLES,
    FORMAT_VERSION,
    ID_ARRAYS,
    LEFT_OUT_TABLES,
    REEMBEDDINGS,
    archive_bytes,
    archive_lines,
    import_archive,
    read_archive,
    read_schema,
)
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View
from tests.storage.saga_fixtures import CAMPAIGN, FIRST, FIRST_NIGHT, LATER
from tests.storage.test_branches import campaign_tables, rows_of, same_but_ids

TEN = clamp(10, 10)
# The triggers' own tables, and the tokens: an import makes them, or leaves them out.
NOT_IN_ARCHIVES = set(DERIVED_TABLES) | set(LEFT_OUT_TABLES)
# Columns holding ids an import gives anew, and the campaign's own key.
NEW_IDS = ("campaign_id", "id", "row_id", "entry_ids", "superseded_by", "source_entry_id")


async def exported(db: Database, campaign: str = CAMPAIGN) -> bytes:
    return b"".join([piece async for piece in archive_bytes(archive_lines(db, campaign))])


def lines_of(archive: bytes) -> list[str]:
    return gzip.decompress(archive).decode().splitlines(keepends=True)


def header_of(archive: bytes) -> dict[str, Any]:
    header = json.loads(lines_of(archive)[0])
    assert isinstance(header, dict)
    return header


async def played_more(db: Database) -> None:
    """What the saga lacks and a campaign holds: a scene, a fact of the session, a secret
    known to one NPC, a line kept to the DM."""
    memory = CampaignMemory(db, CAMPAIGN)
    await memory.scenes.record(
        [Scene(session_id=FIRST, started_at=FIRST_NIGHT, location_id="kettle", present=("mira",))]
    )
    await memory.session_facts.set(LATER, "disguise", "The party wears guild colours.", "vask")
    await db.pool.execute(
        "UPDATE facts SET secret = true, known_by = '{vask}' WHERE campaign_id = $1 "
        "AND text LIKE 'Vask owes%'",
        CAMPAIGN,
    )
    first_line = (await memory.log.entries(FIRST))[1]
    await memory.log.set_dm_only([first_line.id], True)


@pytest.fixture
async def played(saga: Database) -> AsyncIterator[Database]:
    await played_more(saga)
    yield saga


async def test_every_table_of_a_campaign_is_archived_or_made_again_on_import(
    played: Database,
) -> None:
    archive = await exported(played)
    tables = {t["name"]: t for t in header_of(archive)["tables"]}
    assert set(tables) | NOT_IN_ARCHIVES == set(await campaign_tables(played))
    assert not set(tables) & NOT_IN_ARCHIVES
    # Each holds rows, so the round trip below checks every table: a table added later
    # needs a row in the saga or in `played_more`.
    assert [name for name, table in tables.items() if table["rows"] == 0] == []


async def postings_of(db: Database) -> Counter[str]:
    """The campaign's word postings, each with the hearing of its audience."""
    rows = await db.pool.fetch(
        """SELECT to_jsonb(p) - 'audience' || jsonb_build_object(
                      'dm_only', a.dm_only, 'heard_by', a.heard_by) AS row
           FROM word_postings p LEFT JOIN word_audiences a
             ON a.campaign_id = p.campaign_id AND a.id = p.audience
           WHERE p.campaign_id = $1""",
        CAMPAIGN,
    )
    return Counter(json.dumps(row["row"], sort_keys=True) for row in rows)


async def test_an_archive_restored_into_an_empty_database_exports_the_same_bytes(
    played: Database, db256: Database
) -> None:
    archive = await exported(played)
    restored = await import_archive(db256, lines_of(archive), source="saga.jsonl.gz")

    assert restored.campaign_id == CAMPAIGN and not restored.vectors_made_again
    header = header_of(archive)
    assert restored.rows == {t["name"]: t["rows"] for t in header["tables"]}
    assert await exported(db256) == archive
    # What the triggers derive is derived again, and the same; audiences are numbered in
    # the order they are first used, so postings are compared by who may read them.
    assert await postings_of(db256) == await postings_of(played)
    for table in (
        "word_frequencies",
        "campaign_row_counts",
        "session_chunk_entities",
    ):
        assert await rows_of(db256, table, CAMPAIGN) == await rows_of(played, table, CAMPAIGN)
    assert (
        await db256.pool.fetchval("SELECT model FROM embedding_model")
        == header["embedding"]["model"]
    )


async def test_the_archive_is_the_documented_format(played: Database) -> None:
    archive = await exported(played)
    header = header_of(archive)
    assert header["format"] == "glyphoxa-campaign" and header["version"] == FORMAT_VERSION
    assert header["campaign"] == CAMPAIGN and header["embedding"]["dimension"] == 256
    assert "exported_at" not in json.dumps(header)  # nothing that changes between exports
    names = [t["name"] for t in header["tables"]]
    assert names[0] == "campaigns"
    assert names.index("sessions") < names.index("session_entries") < names.index("chunks")
    rows = [json.loads(line) for line in lines_of(archive)[1:]]
    assert len(rows) == sum(t["rows"] for t in header["tables"])
    chunk = next(r["row"] for r in rows if r["table"] == "chunks")
    assert len(chunk["embedding"]) == 256 and "campaign_id" not in chunk and "tsv" not in chunk
    # Ids are numbered within the archive, and references with them.
    entries = [r["row"] for r in rows if r["table"] == "session_entries"]
    assert [e["id"] for e in entries] == list(range(1, len(entries) + 1))
    assert set(chunk["entry_ids"]) <= {e["id"] for e in entries}
    facts = {r["row"]["id"]: r["row"] for r in rows if r["table"] == "facts"}
    retconned = next(f for f in facts.values() if f["superseded_by"] is not None)
    assert retconned["superseded_by"] in facts
    assert all(r["table"] != "access_tokens" for r in rows)


async def test_every_id_a_table_holds_is_numbered_with_the_rows_it_names(played: Database) -> None:
    """A bigint column is an id the database made, a reference to one (a foreign key), or a
    list of them (ID_ARRAYS); a column added later that is none of these must say so."""
    async with played.pool.acquire() as conn:
        schema = await read_schema(conn)
    unexplained = [
        f"{table.name}.{column.name}"
        for table in schema.archived
        for column in table.archived
        if column.base_type in ("int8", "_int8")
        and not column.identity
        and column.name not in table.references
        and (table.name, column.name) not in ID_ARRAYS
    ]
    assert unexplained == []
    # Every vector every row must have can be made again by another model.
    assert [
        f"{table.name}.{column.name}"
        for table in schema.archived
        for column in table.archived
        if column.base_type == "vector" and column.not_null and table.name not in REEMBEDDINGS
    ] == []


async def test_an_archive_imported_beside_its_original_takes_new_ids(
    played: Database, embedder: WordLlamaEmbedder
) -> None:
    archive = await exported(played)
    await import_archive(played, lines_of(archive), source="saga", as_id="ashfall-copy")

    for table in await campaign_tables(played):
        if table not in NOT_IN_ARCHIVES and table != "campaigns":
            assert await rows_of(played, table, "ashfall-copy") == await rows_of(
                played, table, CAMPAIGN
            ), table
    overlap = await played.pool.fetchval(
        "SELECT count(*) FROM session_entries a JOIN session_entries b ON a.id = b.id "
        "WHERE a.campaign_id = $1 AND b.campaign_id = $2",
        CAMPAIGN,
        "ashfall-copy",
    )
    assert overlap == 0
    # The original is as it was.
    assert await exported(played) == archive
    original = View(CampaignMemory(played, CAMPAIGN), None, embedder)
    copy = View(CampaignMemory(played, "ashfall-copy"), None, embedder)
    for query in ("salt-bread at dawn", "who owes money to the guild"):
        found = [await view.search_sessions(query, TEN) for view in (original, copy)]
        assert same_but_ids(found[0], found[1]) and found[0].results
    for npc in ("mira", "vask"):
        hot = [await view.of_npc(npc).hot_context(npc, LATER) for view in (original, copy)]
        assert same_but_ids(hot[0], hot[1])


async def test_an_import_refuses_an_existing_campaign_and_a_newer_format(
    played: Database, db256: Database
) -> None:
    lines = lines_of(await exported(played))
    with pytest.raises(ConflictError, match="'ashfall' exists already; nothing was imported"):
        await import_archive(played, lines, source="saga")

    newer = json.loads(lines[0]) | {"version": FORMAT_VERSION + 1}
    with pytest.raises(InvalidInputError, match=r"saga:1: version: archive format 2 is newer"):
        await import_archive(db256, [json.dumps(newer), *lines[1:]], source="saga")

    cut_short = lines[:-3]
    with pytest.raises(InvalidInputError, match="cut short or was edited; nothing was imported"):
        await import_archive(db256, cut_short, source="saga")

    unknown = json.loads(lines[0])
    unknown["tables"][1]["columns"]["mood"] = "text"
    with pytest.raises(InvalidInputError, match=r"this database has no \w+\.mood"):
        await import_archive(db256, [json.dumps(unknown), *lines[1:]], source="saga")
    assert await db256.pool.fetchval("SELECT count(*) FROM campaigns") == 0


async def test_a_damaged_file_is_named(tmp_path: Path, played: Database) -> None:
    path = tmp_path / "saga.glyphoxa.jsonl.gz"
    path.write_bytes((await exported(played))[:-40])
    with pytest.raises(InvalidInputError, match="damaged or cut short"):
        list(read_archive(str(path)))


async def test_vectors_of_another_model_are_made_again(
    played: Database, db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    lines = lines_of(await exported(played))
    with pytest.raises(ConfigurationError, match="configure the embedder"):
        await import_archive(db384, lines, source="saga")

    restored = await import_archive(db384, lines, source="saga", embedder=lambda: offline_embedder)

    assert restored.vectors_made_again and restored.embedding_model == offline_embedder.model
    assert await db384.pool.fetchval("SELECT model FROM embedding_model") == (
        offline_embedder.model
    )
    vectors = await db384.pool.fetchrow(
        "SELECT (SELECT count(*) FROM chunks WHERE vector_dims(embedding) = 384) AS chunks, "
        "(SELECT count(*) FROM lore_sections WHERE vector_dims(embedding) = 384) AS lore, "
        "(SELECT count(*) FROM facts WHERE embedding IS NOT NULL) AS facts"
    )
    assert vectors is not None and vectors["chunks"] > 0 and vectors["lore"] == 1
    assert vectors["facts"] == 0  # made after the import (desk/archive_actions.py)
    view = View(CampaignMemory(db384, CAMPAIGN), None, offline_embedder)
    found = await view.search_sessions("a bowl of salt-bread", TEN)
    assert found.results and "salt-bread" in found.results[0].text
