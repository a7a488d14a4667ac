"""The DM's commands that write facts and relationships leave them embedded, by the default
offline model, and `backfill-embeddings` embeds what has no vector (in process: see
tests/cli/runner.py)."""

from __future__ import annotations

import json
from pathlib import Path

from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.db.database import Database
from tests.cli.conftest import Cli

SAMPLE_FACTS = 9
SAMPLE_LINKS = 28  # the file's 26 relationships, ALLIED_WITH and HOSTILE_TO stored both ways


async def unembedded(db: Database) -> list[str]:
    rows = await db.pool.fetch(
        "SELECT text FROM facts WHERE superseded_by IS NULL AND embedding IS NULL ORDER BY id"
    )
    return [r["text"] for r in rows]


async def unembedded_links(db: Database) -> int:
    count: int = await db.pool.fetchval(
        "SELECT count(*) FROM relationships WHERE embedding IS NULL"
    )
    return count


async def test_loading_adding_retconning_relating_and_renaming_leave_everything_embedded(
    glyphoxa: Cli, db256: Database, tmp_path: Path
) -> None:
    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(bundled("campaign.yaml"), encoding="utf-8")
    loaded = glyphoxa("campaign", "load", str(campaign), "--campaign", "demo")
    assert loaded.returncode == 0, loaded.stderr
    assert await unembedded(db256) == []

    def dm(*args: str) -> dict[str, object]:
        ran = glyphoxa(*args, "--campaign", "demo", "--json")
        assert ran.returncode == 0, ran.stderr
        result: dict[str, object] = json.loads(ran.stdout)
        return result

    added = dm("fact", "add", "Old Berrit", "Old Berrit once sailed with pirates.")
    assert await unembedded(db256) == []
    dm("fact", "retcon", f"fact:{added['id']}", "Old Berrit once sailed with the navy.")
    assert await unembedded(db256) == []
    current = await db256.pool.fetchval(
        "SELECT count(*) FROM facts WHERE superseded_by IS NULL AND embedding IS NOT NULL"
    )
    assert current == SAMPLE_FACTS + 1

    assert await unembedded_links(db256) == 0
    dm("relate", "Ilvenna", "KNOWS", "Maelis")
    assert await unembedded_links(db256) == 0
    dm("entity", "edit", "Maelis", "--rename", "Maelis the Seer")
    assert await unembedded_links(db256) == 0
    sentence = await db256.pool.fetchval(
        "SELECT count(*) FROM relationships WHERE target_id = 'maelis' AND embedding IS NOT NULL"
    )
    assert sentence == 1


async def test_backfill_embeddings_embeds_old_facts_once(
    glyphoxa: Cli, db256: Database, tmp_path: Path
) -> None:
    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(bundled("campaign.yaml"), encoding="utf-8")
    assert glyphoxa("campaign", "load", str(campaign), "--campaign", "demo").returncode == 0
    # As a database from before facts were embedded has them.
    await db256.pool.execute("UPDATE facts SET embedding = NULL")
    assert len(await unembedded(db256)) == SAMPLE_FACTS

    await db256.pool.execute("UPDATE relationships SET embedding = NULL")

    first = glyphoxa("backfill-embeddings")
    assert first.returncode == 0, first.stderr
    assert f"{SAMPLE_FACTS} facts and {SAMPLE_LINKS} relationships without" in first.stdout
    assert f"embedded {SAMPLE_FACTS} facts and {SAMPLE_LINKS} relationships" in first.stdout
    assert await unembedded(db256) == []
    assert await unembedded_links(db256) == 0

    again = glyphoxa("backfill-embeddings", "--campaign", "demo")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "0 facts and 0 relationships without a vector"
