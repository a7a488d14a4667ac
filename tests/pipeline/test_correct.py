from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_mcp.correction.known_names import CorrectorCache
from glyphoxa_mcp.domain.models import NewEntity, NewEntry, TextCorrection
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.correct import correct_session
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.storage.graph_fixtures import build_village

START = datetime(2026, 3, 1, 19, tzinfo=UTC)


async def record(memory: CampaignMemory, *lines: str) -> None:
    await memory.log.append_many(
        "s1",
        [
            NewEntry(
                speaker_id="p1",
                speaker_name="Kael",
                text=line,
                spoken_at=START + timedelta(seconds=i),
            )
            for i, line in enumerate(lines)
        ],
    )


@pytest.mark.slow
async def test_names_are_corrected_before_chunking_and_the_raw_text_is_kept(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await build_village(semantic_memory)
    await record(semantic_memory, "We ask grim jaw about the forge.", "Rain again.")
    report = await process_session(semantic_memory, offline_embedder, "s1")
    assert report.corrected == 1
    first, second = await semantic_memory.log.entries("s1")
    assert (first.text, first.raw_text) == (
        "We ask Grimjaw about the forge.",
        "We ask grim jaw about the forge.",
    )
    assert first.corrections == (
        TextCorrection(
            start=7,
            end=15,
            heard="grim jaw",
            entity="Grimjaw",
            entity_id="grimjaw",
            stage="phonetic",
        ),
    )
    assert (second.text, second.corrections) == ("Rain again.", ())
    (chunk,) = [m.chunk for m in await semantic_memory.index.search_text("Grimjaw", k=5)]
    assert chunk.content.startswith("Kael: We ask Grimjaw about the forge.")
    assert chunk.entity_ids == ("grimjaw",)
    again = await process_session(semantic_memory, offline_embedder, "s1")
    assert (again.corrected, again.passages) == (0, report.passages)


async def test_a_new_name_in_the_graph_is_used_on_the_next_run(memory: CampaignMemory) -> None:
    await build_village(memory)
    await record(memory, "Then Tal Vessin spies arrive.")
    correctors = CorrectorCache()
    before = await correct_session(memory, "s1", correctors)
    await memory.graph.upsert_entity(NewEntity(type=EntityType.FACTION, name="Tal'Vessin"))
    after = await correct_session(memory, "s1", correctors)
    assert (before.changed, after.changed, after.names - before.names) == (0, 1, 1)
    (entry,) = await memory.log.entries("s1")
    assert entry.text == "Then Tal'Vessin spies arrive."


async def test_a_later_stage_correction_survives_a_phonetic_rerun(memory: CampaignMemory) -> None:
    await build_village(memory)
    await record(memory, "grim jaw met marigold")
    (entry,) = await memory.log.entries("s1")
    llm_fix = TextCorrection(start=13, end=21, heard="marigold", entity="Mira", stage="llm")
    await memory.log.set_corrected([(entry.id, "grim jaw met Mira", (llm_fix,))])
    await correct_session(memory, "s1")
    (entry,) = await memory.log.entries("s1")
    assert entry.text == "Grimjaw met Mira"
    assert [c.stage for c in entry.corrections] == ["phonetic", "llm"]
    assert entry.raw_text == "grim jaw met marigold"


async def test_passages_cut_before_a_correction_are_replaced(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await build_village(semantic_memory)
    await record(semantic_memory, "Then Tal Vessin spies arrive.", "We hide.")
    first = await process_session(semantic_memory, offline_embedder, "s1")
    await semantic_memory.graph.upsert_entity(NewEntity(type=EntityType.FACTION, name="Tal'Vessin"))
    second = await process_session(semantic_memory, offline_embedder, "s1")
    assert (first.passages, second.corrected, second.embedded, second.removed) == (1, 1, 1, 1)
    (chunk,) = [m.chunk for m in await semantic_memory.index.search_text("spies", k=5)]
    assert chunk.content.startswith("Kael: Then Tal'Vessin spies arrive.")
