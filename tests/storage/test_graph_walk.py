"""The level-by-level walk finds what walking every path finds: each entity once, at its
least depth, with the least of its shortest paths; and stops early when asked for few."""

from __future__ import annotations

import random

import pytest

from glyphoxa_mcp.domain.models import NewEntity, NewRelationship, Visibility
from glyphoxa_mcp.domain.vocabulary import BIDIRECTIONAL_TYPES, EntityType
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.sql_parts import entity_visible, visible

TYPES = ["KNOWS", "MEMBER_OF", "ALLIED_WITH", "LOCATED_AT", "HOSTILE_TO"]
NPCS = ["n00", "n01", "n02"]

# The walk as it was: every simple path, then the least depth and path per entity.
EVERY_PATH = f"""
WITH RECURSIVE walk (id, depth, path, via) AS (
    SELECT a.id, 0, ARRAY[a.id], NULL::text FROM entities a
    WHERE a.campaign_id = $1 AND a.id = $2 AND {entity_visible("a", "$3")}
    UNION ALL
    SELECT step.next_id, w.depth + 1, w.path || step.next_id, step.rel_type
    FROM walk w
    CROSS JOIN LATERAL (
        SELECT r.target_id AS next_id, r.rel_type FROM relationships r
        WHERE r.campaign_id = $1 AND r.source_id = w.id AND {visible("r", "$3")}
          AND ($5::text[] IS NULL OR r.rel_type = ANY($5))
        UNION ALL
        SELECT r.source_id, r.rel_type FROM relationships r
        WHERE $6 AND r.campaign_id = $1 AND r.target_id = w.id AND {visible("r", "$3")}
          AND ($5::text[] IS NULL OR r.rel_type = ANY($5))
          AND NOT r.rel_type = ANY($7::text[])
    ) step
    JOIN entities n ON n.campaign_id = $1 AND n.id = step.next_id
    WHERE w.depth < $4 AND NOT step.next_id = ANY(w.path) AND {entity_visible("n", "$3")}
),
nearest AS (
    SELECT DISTINCT ON (w.id) w.id, w.depth, w.path FROM walk w
    WHERE w.depth > 0 ORDER BY w.id, w.depth, w.path
)
SELECT n.id, n.depth, n.path FROM nearest n JOIN entities e ON e.campaign_id = $1 AND e.id = n.id
ORDER BY n.depth, e.name, e.id
"""


async def _random_graph(memory: CampaignMemory) -> None:
    rng = random.Random(7)
    ids = [f"n{i:02d}" for i in range(40)]
    for entity_id in ids:
        roll = rng.random()
        hidden = Visibility(secret=roll < 0.1, known_by=tuple(rng.sample(NPCS, 1)))
        await memory.graph.upsert_entity(
            NewEntity(
                id=entity_id,
                type=EntityType.NPC,
                # Names out of id order, some alike, so the order by name matters.
                name=f"{rng.choice('ABCDE')}{rng.choice('xyz')}",
                visibility=hidden if roll < 0.2 else Visibility(),
            )
        )
    for _ in range(110):
        source, target = rng.sample(ids, 2)
        hidden = Visibility(secret=True, known_by=tuple(rng.sample(NPCS, 1)))
        await memory.graph.upsert_relationship(
            NewRelationship(
                source_id=source,
                target_id=target,
                rel_type=rng.choice(TYPES),
                visibility=hidden if rng.random() < 0.15 else Visibility(),
            )
        )


@pytest.mark.parametrize("npc", [None, "n01"])
@pytest.mark.slow
async def test_the_walk_finds_what_walking_every_path_finds(
    memory: CampaignMemory, npc: str | None
) -> None:
    await _random_graph(memory)
    pool = memory.queries._pool
    for anchor in ["n00", "n05", "n13", "n27"]:
        for depth in (1, 2, 3):
            for direction, rel_types in (("both", None), ("outgoing", None), ("both", ["KNOWS"])):
                expected = await pool.fetch(
                    EVERY_PATH,
                    memory.campaign_id,
                    anchor,
                    npc,
                    depth,
                    rel_types,
                    direction == "both",
                    list(BIDIRECTIONAL_TYPES),
                )
                expected = [(r["id"], r["depth"], tuple(r["path"])) for r in expected]
                found = await memory.queries.neighbours(
                    anchor,
                    depth=depth,
                    npc_id=npc,
                    direction=direction,  # type: ignore[arg-type]
                    rel_types=rel_types,
                    limit=1000,
                )
                assert [(n.entity.id, n.depth, n.path) for n in found] == expected
                for few in (1, 3, 8):
                    nearest = await memory.queries.neighbours(
                        anchor,
                        depth=depth,
                        npc_id=npc,
                        direction=direction,  # type: ignore[arg-type]
                        rel_types=rel_types,
                        limit=few,
                    )
                    assert [(n.entity.id, n.depth, n.path) for n in nearest] == expected[:few]
