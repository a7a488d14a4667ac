from __future__ import annotations

import pytest

from glyphoxa_mcp.domain.models import NewFact, NewRelationship, Provenance, Visibility
from glyphoxa_mcp.errors import ConflictError, NotFoundError
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.storage.graph_fixtures import build_village

RUMOUR = Provenance(confidence=0.3, source="inferred")


async def test_the_review_queue_holds_unconfirmed_low_confidence_items(
    memory: CampaignMemory,
) -> None:
    await build_village(memory)
    await memory.graph.upsert_relationship(
        NewRelationship(
            source_id="smiths-guild", target_id="cult", rel_type="HOSTILE_TO", provenance=RUMOUR
        )
    )
    rumour = await memory.graph.upsert_fact(
        NewFact(subject_id="mira", text="Mira stole a pie.", provenance=RUMOUR)
    )
    queue = await memory.curation.review_queue(0.7)
    # OWNS (0.4) and the bidirectional HOSTILE_TO pair, listed once.
    assert [(r.rel_type, r.source_id) for r in queue.relationships] == [
        ("OWNS", "grimjaw"),
        ("HOSTILE_TO", "smiths-guild"),
    ]
    assert [f.id for f in queue.facts] == [rumour.id]
    hostile = queue.relationships[1]
    await memory.curation.confirm("relationship", hostile.id)
    await memory.curation.confirm("fact", rumour.id)
    after = await memory.curation.review_queue(0.7)
    assert [r.rel_type for r in after.relationships] == ["OWNS"] and after.facts == ()
    both = await memory.graph.relationships_of("cult", direction="outgoing")
    assert [r.provenance.dm_confirmed for r in both if r.rel_type == "HOSTILE_TO"] == [True]
    assert len((await memory.curation.review_queue(threshold=0.1)).relationships) == 0


async def test_a_retcon_keeps_history_and_serves_only_the_new_text(memory: CampaignMemory) -> None:
    await build_village(memory)
    [old, *_] = await memory.graph.facts_about("grimjaw")
    new = await memory.curation.retcon(old.id, "Grimjaw forged the town gate itself.")
    current = [f.text for f in await memory.graph.facts_about("grimjaw")]
    assert new.text in current and old.text not in current
    assert [f.text for f in await memory.curation.history(new.id)] == [old.text, new.text]
    with pytest.raises(NotFoundError, match="already retconned"):
        await memory.curation.retcon(old.id, "Again.")
    with pytest.raises(ConflictError):
        await memory.curation.retcon(new.id, "Grimjaw once served in the Town Watch.")


async def test_secrets_can_be_marked_and_revealed(memory: CampaignMemory) -> None:
    await build_village(memory)
    await memory.curation.set_visibility(
        "entity", "mira", Visibility(secret=True, known_by=("vask",))
    )
    assert await memory.graph.find_entities(name="mira", npc_id="grimjaw") == []
    await memory.curation.set_visibility("entity", "mira", Visibility())
    assert len(await memory.graph.find_entities(name="mira", npc_id="grimjaw")) == 1
    with pytest.raises(NotFoundError):
        await memory.curation.set_visibility("fact", 999_999, Visibility(secret=True))
