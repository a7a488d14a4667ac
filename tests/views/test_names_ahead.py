"""The names read in texts, kept in the database by one process and used by the next: an NPC
is shown the same facts and lines either way, and the next process corrects no text the
first had read under the same names. Once a name changes, nothing kept before is used."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.domain.models import NewEntity, NewEntry, NewFact, Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.finish import end_session
from glyphoxa_mcp.pipeline.read_all_names import read_all_names
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.recall import names_read as reading
from glyphoxa_mcp.storage.deletion import remove_line
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views import names_ahead
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View

TEN = clamp(10, 50)
FACTS = [
    "The Sault Knives pay the harbour watch in salt.",  # misspelt: hidden from Ysolde
    "The harbour watch drinks at the Red Kettle.",
    "Brannoch brews a pepper stew every market day.",
]
LINES = [
    ("Brannoch", "Word is the Sault Knives run the docks now."),
    ("Ysolde", "The harbour watch looks the other way at night."),
    ("Brannoch", "Pepper stew again, and the watch drinks it all."),
]


def secret(entity_id: str, name: str, known_by: str) -> NewEntity:
    return NewEntity(
        id=entity_id,
        type=EntityType.FACTION,
        name=name,
        visibility=Visibility(secret=True, known_by=(known_by,)),
    )


async def world(memory: CampaignMemory) -> None:
    graph = memory.graph
    await graph.upsert_entity(NewEntity(id="ysolde", type=EntityType.NPC, name="Ysolde"))
    await graph.upsert_entity(NewEntity(id="brannoch", type=EntityType.NPC, name="Brannoch"))
    await graph.upsert_entity(secret("salt-knives", "Salt Knives", "brannoch"))
    for text in FACTS:
        await graph.upsert_fact(NewFact(text=text, session_id="s1"))
    await memory.log.append_many(
        "s1",
        [
            NewEntry(
                speaker_id=speaker.lower(),
                speaker_name=speaker,
                npc_id=speaker.lower(),
                text=text,
                spoken_at=datetime(2026, 3, 1, 20, minute, tzinfo=UTC),
            )
            for minute, (speaker, text) in enumerate(LINES)
        ],
    )


def a_new_process() -> None:
    """What this process has read is forgotten, as in a process that just started."""
    reading._READ.clear()
    reading._ASKED.clear()
    names_ahead._WAITING.clear()


async def answers(view: View) -> tuple[list[str], list[str]]:
    facts = await view.search_facts("harbour watch knives salt stew", TEN)
    lines = await view.search_sessions("harbour watch knives docks stew", TEN)
    return sorted(h.text for h in facts.results), sorted(h.text for h in lines.results)


@pytest.fixture(autouse=True)
def keep_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(names_ahead, "KEEP_AT", 1)
    a_new_process()


async def test_a_second_process_shows_what_the_first_did_and_corrects_nothing(
    memory: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    await world(memory)
    first = await answers(View(memory, "ysolde"))
    assert not any("Knives" in text for texts in first for text in texts)
    assert any("pepper stew" in text for text in first[0])
    kept = await memory.db.pool.fetchval("SELECT count(*) FROM names_read")
    assert kept >= len(FACTS) + len(LINES) - 1

    a_new_process()
    corrected: list[str] = []
    correct = PhoneticCorrector.correct

    def counted(self: PhoneticCorrector, text: str):  # type: ignore[no-untyped-def]
        corrected.append(text)
        return correct(self, text)

    monkeypatch.setattr(PhoneticCorrector, "correct", counted)
    assert await answers(View(memory, "ysolde")) == first
    assert not [text for text in corrected if "Knives" in text or "watch" in text]


async def test_nothing_kept_is_used_once_a_name_changes(memory: CampaignMemory) -> None:
    """ "The Gray Wardun patrol" reads no hidden name and is kept so; once the secret is
    renamed the Grey Wardens, it reads as the secret, and what was kept must not say
    otherwise (no spelled form of the new name is in the line: only correction finds it)."""
    await world(memory)
    patrol = "The Gray Wardun patrol the harbour watch at night."
    await memory.graph.upsert_fact(NewFact(text=patrol, session_id="s1"))
    facts, _ = await answers(View(memory, "ysolde"))
    assert patrol in facts
    kept = await memory.db.pool.fetchval("SELECT count(*) FROM names_read")
    await memory.graph.upsert_entity(secret("salt-knives", "Grey Wardens", "brannoch"))
    a_new_process()
    names = await memory.entity_names()
    corrector = SHARED_CORRECTORS.for_entities(names.entities)
    assert "salt-knives" in reading.names_read(corrector, patrol)
    texts = [patrol, *FACTS, *(f"{speaker}: {text}" for speaker, text in LINES)]
    assert kept and await memory.names_read.found(list(reading.unread(corrector, texts))) == {}
    facts, _ = await answers(View(memory, "ysolde"))
    assert patrol not in facts


async def test_a_text_withheld_before_correction_is_looked_up_once(
    memory: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fact naming the secret as spelled is withheld before correction runs, so nothing
    is kept for it; it is still asked for once per process, not at every call."""
    await world(memory)
    spelled = "The Salt Knives own the harbour watch."
    await memory.graph.upsert_fact(NewFact(text=spelled, session_id="s1"))
    asked: list[str] = []
    found = memory.names_read.found

    async def counted(readings: list[bytes]) -> dict[bytes, tuple[str | None, ...]]:
        asked.extend(map(bytes.hex, readings))
        return await found(readings)

    monkeypatch.setattr(memory.names_read, "found", counted)
    ysolde = View(memory, "ysolde")
    for _ in range(3):
        await ysolde.search_facts("harbour watch knives", TEN)
    assert asked and len(asked) == len(set(asked))


async def test_a_text_one_npc_never_corrected_is_kept_by_the_next_that_does(
    memory: CampaignMemory,
) -> None:
    """Ysolde's check withholds the spelled secret before correcting it; Brannoch, who knows
    it but not Ysolde's own secret, corrects the same text, and it is kept then."""
    await world(memory)
    await memory.graph.upsert_entity(secret("grey-court", "Grey Court", "ysolde"))
    spelled = "The Salt Knives own the harbour watch."
    await memory.graph.upsert_fact(NewFact(text=spelled, session_id="s1"))
    await View(memory, "ysolde").search_facts("harbour watch knives", TEN)
    names = await memory.entity_names()
    corrector = SHARED_CORRECTORS.for_entities(names.entities)
    reading_key = reading.reading_of(reading.names_digest(corrector), spelled)
    assert await memory.names_read.found([reading_key]) == {}
    found = await View(memory, "brannoch").search_facts("harbour watch knives", TEN)
    assert spelled in [hit.text for hit in found.results]
    # Kept as corrected: a name spelled right is no correction (the spelled forms find it).
    assert set(await memory.names_read.found([reading_key])) == {reading_key}


async def test_deleting_a_line_or_a_fact_forgets_what_was_read(memory: CampaignMemory) -> None:
    await world(memory)
    await answers(View(memory, "ysolde"))
    assert await memory.db.pool.fetchval("SELECT count(*) FROM names_read")
    line = (await memory.log.entries("s1"))[0]
    await remove_line(memory.db, memory.campaign_id, line.id)
    assert await memory.db.pool.fetchval("SELECT count(*) FROM names_read") == 0
    a_new_process()
    await answers(View(memory, "ysolde"))
    fact = (await memory.graph.current_facts())[0]
    assert await memory.graph.delete_fact(fact.id)
    assert await memory.db.pool.fetchval("SELECT count(*) FROM names_read") == 0


@pytest.mark.slow
async def test_a_session_end_forgets_what_was_read_under_other_names(
    semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await world(semantic_memory)
    await answers(View(semantic_memory, "ysolde"))
    assert await semantic_memory.db.pool.fetchval("SELECT count(*) FROM names_read")
    await end_session(semantic_memory.db, semantic_memory.campaign_id, "s1", offline_embedder)
    # Its episode is a new name: nothing read before is found under the names now.
    assert await semantic_memory.db.pool.fetchval("SELECT count(*) FROM names_read") == 0


async def test_a_campaign_read_whole_keeps_every_text_once_and_forgets_old_names(
    memory: CampaignMemory,
) -> None:
    await world(memory)
    first = await read_all_names(memory)
    assert (first.texts, first.worked_out, first.forgotten) == (len(LINES) + len(FACTS), 6, 0)
    again = await read_all_names(memory)
    assert (again.worked_out, again.forgotten) == (0, 0)
    await memory.graph.upsert_entity(NewEntity(id="wendrith", type=EntityType.NPC, name="Wendrith"))
    renamed = await read_all_names(memory)
    assert (renamed.worked_out, renamed.forgotten) == (renamed.texts, first.texts)


async def test_a_database_that_does_not_keep_costs_no_answer(memory: CampaignMemory) -> None:
    await world(memory)
    first = await answers(View(memory, "ysolde"))
    a_new_process()
    await memory.db.pool.execute("DROP TABLE names_read")
    assert await answers(View(memory, "ysolde")) == first
