"""The databases seeded once per run are read only for the tests that share them."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.domain.models import NewEntity
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import GlyphoxaError
from tests.conftest import TEST_EMBEDDING_DIM, read_only


async def test_a_test_that_writes_to_a_shared_database_fails(village_dsn: str) -> None:
    async with read_only(village_dsn, TEST_EMBEDDING_DIM) as memory:
        assert await memory.graph.get_entity("grimjaw")
        with pytest.raises(GlyphoxaError, match="read-only"):
            await memory.graph.upsert_entity(NewEntity(type=EntityType.NPC, name="Intruder"))
