"""The lore library's store: adding again in place, visibility copied to every section and
kept out of the word statistics, pins that hold, and removal without a trace."""

from __future__ import annotations

import hashlib

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewEntity, Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import ConflictError, InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.lore_library import LoreLibrary, NewLoreDocument, NewLoreSection
from glyphoxa_mcp.storage.memory import CampaignMemory

PUBLIC = Visibility()
VASK_ONLY = Visibility(secret=True, known_by=("vask",))
LORE_TABLES = ("lore_documents", "lore_sections", "lore_pins")


def document(
    doc_id: str,
    sections: list[tuple[str, str]] | None,
    visibility: Visibility = PUBLIC,
    *,
    version: str = "1",
) -> NewLoreDocument:
    return NewLoreDocument(
        id=doc_id,
        title=doc_id.title(),
        source_kind="markdown",
        source_name=f"{doc_id}.md",
        checksum=hashlib.sha256(f"{doc_id} {version}".encode()).hexdigest(),
        visibility=visibility,
        sections=None
        if sections is None
        else tuple(
            NewLoreSection(heading=h, text=t, embedding=[1.0, n, 0.0, 0.5])
            for n, (h, t) in enumerate(sections)
        ),
    )


TEMPLE = [("History", "The drowned temple rang its bells."), ("Rumours", "Smugglers hide there.")]


@pytest.fixture
async def library(db: Database, memory: CampaignMemory) -> LoreLibrary:
    for name, npc_id in (("Mira", "mira"), ("Captain Vask", "vask")):
        await memory.graph.upsert_entity(NewEntity(type=EntityType.NPC, name=name, id=npc_id))
    return LoreLibrary(db, memory.campaign_id)


async def _statistics(db: Database, campaign_id: str) -> tuple[int, int, int]:
    """Sections counted in the word statistics, postings, and frequencies of 'l'."""
    row = await db.pool.fetchrow(
        "SELECT (SELECT coalesce(sum(documents), 0) FROM word_collections"
        "        WHERE campaign_id = $1 AND collection = 'l') AS counted,"
        " (SELECT count(*) FROM word_postings WHERE campaign_id = $1 AND collection = 'l')"
        "   AS postings,"
        " (SELECT count(*) FROM word_frequencies WHERE campaign_id = $1 AND collection = 'l')"
        "   AS frequencies",
        campaign_id,
    )
    return row["counted"], row["postings"], row["frequencies"]


async def test_adding_again_updates_in_place_or_changes_nothing(
    db: Database, memory: CampaignMemory, library: LoreLibrary
) -> None:
    first = await library.add([document("temple", TEMPLE)])
    assert [(a.id, a.action) for a in first] == [("temple", "added")]
    again = await library.add([document("temple", None)])
    assert [a.action for a in again] == ["unchanged"]
    edited = [("History", "The temple sank in one night.")]
    updated = await library.add([document("temple", edited, version="2")])
    assert [a.action for a in updated] == ["updated"]
    (stored,) = await library.documents()
    assert (stored.sections, stored.pins, stored.title) == (1, 0, "Temple")
    found = await memory.lore.by_text("sank night", k=5, npc_id="mira")
    assert [m.passage.text for m in found] == ["The temple sank in one night."]
    assert not await memory.lore.by_text("smugglers bells", k=5, npc_id=None)
    # A document whose text changed since its checksum was read is not written half.
    with pytest.raises(ConflictError, match="changed while it was being added"):
        await library.add([document("temple", None, version="3")])
    with pytest.raises(InvalidInputError, match="added once in one addition"):
        await library.add([document("a", TEMPLE), document("a", TEMPLE)])


async def test_a_secret_document_is_read_only_by_its_knowers_and_not_counted(
    db: Database, memory: CampaignMemory, library: LoreLibrary
) -> None:
    await library.add([document("temple", TEMPLE), document("pact", [("Pact", "Vask swore.")])])
    counted_public = await _statistics(db, memory.campaign_id)
    assert counted_public[0] == 3
    changed = await library.add([document("pact", None, VASK_ONLY)])
    assert [a.action for a in changed] == ["visibility changed"]
    assert await db.pool.fetch(
        "SELECT secret, known_by FROM lore_sections"
        " WHERE campaign_id = $1 AND document_id = 'pact'",
        memory.campaign_id,
    ) == [(True, ["vask"])]
    counted, postings, _ = await _statistics(db, memory.campaign_id)
    # The secret section's words are searchable by Vask, but count in no statistic.
    assert counted == 2 and postings == counted_public[1]
    for npc, expected in (("vask", ["Vask swore."]), (None, ["Vask swore."]), ("mira", [])):
        words = await memory.lore.by_text("swore", k=5, npc_id=npc)
        meaning = await memory.lore.by_vector([1.0, 0.0, 0.0, 0.5], k=5, npc_id=npc)
        assert [m.passage.text for m in words] == expected
        assert ("Vask swore." in [m.passage.text for m in meaning]) == bool(expected)


async def test_pins_hold_only_sections_their_npc_may_read(
    memory: CampaignMemory, library: LoreLibrary
) -> None:
    await library.add(
        [document("temple", TEMPLE), document("pact", [("Pact", "Secret.")], VASK_ONLY)]
    )
    assert await library.pin("mira", "temple", "Rumours") is True
    assert await library.pin("mira", "temple", "Rumours") is False
    with pytest.raises(InvalidInputError, match="'mira' may not know lore document 'pact'"):
        await library.pin("mira", "pact", "Pact")
    with pytest.raises(NotFoundError, match="has no section 'Reefs'"):
        await library.pin("mira", "temple", "Reefs")
    with pytest.raises(NotFoundError, match="No lore document 'atlas'"):
        await library.pin("mira", "atlas", "Reefs")
    await library.pin("vask", "pact", "Pact")
    await library.pin("vask", "temple", "History")
    pinned = await memory.lore.pinned_for("mira")
    assert [(p.document_title, p.heading, p.text) for p in pinned] == [
        ("Temple", "Rumours", "Smugglers hide there.")
    ]
    # The Rumours are gone from the temple, and the pact is now the DM's alone.
    result = await library.add(
        [
            document("temple", TEMPLE[:1], version="2"),
            document("pact", None, Visibility(secret=True)),
        ]
    )
    dropped = {a.id: [(p.npc_id, p.heading) for p in a.pins_dropped] for a in result}
    assert dropped == {"temple": [("mira", "Rumours")], "pact": [("vask", "Pact")]}
    assert [(p.npc_id, p.heading) for p in await library.pins()] == [("vask", "History")]
    assert await library.unpin("vask", "temple", "History") is True
    assert await library.unpin("vask", "temple", "History") is False


async def test_a_deleted_npc_leaves_no_knowledge_behind_for_a_new_one_of_its_id(
    db: Database, memory: CampaignMemory, library: LoreLibrary
) -> None:
    await library.add([document("pact", [("Pact", "Vask swore.")], VASK_ONLY)])
    await library.pin("vask", "pact", "Pact")
    await memory.graph.delete_entity("vask")
    await memory.graph.upsert_entity(NewEntity(type=EntityType.NPC, name="Vask", id="vask"))
    assert not await memory.lore.by_text("swore", k=5, npc_id="vask")
    assert (await library.document("pact")).visibility == Visibility(secret=True)
    assert await library.pins() == []


async def test_lore_moves_the_knowledge_counter_and_leaves_no_trace(
    db: Database, memory: CampaignMemory, other_campaign: CampaignMemory, library: LoreLibrary
) -> None:
    other = LoreLibrary(db, other_campaign.campaign_id)
    await other.add([document("temple", TEMPLE)])
    before = await memory.knowledge_cache.version()
    await library.add([document("temple", TEMPLE)])
    await library.pin("mira", "temple", "History")
    assert await memory.knowledge_cache.version() > before
    await library.remove("temple")
    for table in LORE_TABLES:
        left = await db.pool.fetchval(
            f"SELECT count(*) FROM {table} WHERE campaign_id = $1", memory.campaign_id
        )
        assert left == 0, table
    assert await _statistics(db, memory.campaign_id) == (0, 0, 0)
    with pytest.raises(NotFoundError, match="`glyphoxa-mcp lore list` shows them"):
        await library.remove("temple")
    # The other campaign's copy is untouched; deleting its campaign takes it all.
    assert [d.id for d in await other.documents()] == ["temple"]
    await db.pool.execute("DELETE FROM campaigns WHERE id = $1", other_campaign.campaign_id)
    for table in LORE_TABLES:
        assert not await db.pool.fetchval(f"SELECT count(*) FROM {table}"), table
    assert await _statistics(db, other_campaign.campaign_id) == (0, 0, 0)
