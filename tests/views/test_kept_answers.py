"""What a viewer is shown is kept while nothing it knows changes, and is shown afresh at the
first call after a change by anyone: an entity as memory.query_entities shows it, the
sessions an NPC may not read, the NPC's own identity in its hot context."""

from __future__ import annotations

import pytest

from glyphoxa_mcp.domain.models import NewEntity, NewRelationship, NewSession
from glyphoxa_mcp.domain.rumours import dm_statement
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.storage.graph_queries import GraphQueries
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View

TEN = clamp(10, 50)
ONE_HOP = clamp(1, 3)


@pytest.fixture
async def tavern(memory: CampaignMemory) -> CampaignMemory:
    """Mira, who works at the Red Kettle (told in session s1) and knows Oswin (s2)."""
    await memory.sessions.upsert(NewSession(id="s2", title="The well"))
    for entity in (
        NewEntity(id="mira", type=EntityType.NPC, name="Mira"),
        NewEntity(id="kettle", type=EntityType.LOCATION, name="The Red Kettle"),
        NewEntity(id="oswin", type=EntityType.NPC, name="Oswin"),
    ):
        await memory.graph.upsert_entity(entity)
    for target, rel_type, told_in in (("kettle", "WORKS_AT", "s1"), ("oswin", "KNOWS", "s2")):
        await memory.graph.upsert_relationship(
            NewRelationship(
                source_id="mira",
                target_id=target,
                rel_type=rel_type,
                provenance=dm_statement(session_id=told_in),
            )
        )
    return memory


async def related_to_mira(view: View) -> set[str]:
    found = await view.query_entities(TEN, ONE_HOP, name="Mira")
    assert [e.id for e in found.entities] == ["mira"]
    return {r.other_id for r in found.entities[0].relationships}


async def test_a_session_given_to_the_dm_alone_is_withheld_from_the_next_call(
    tavern: CampaignMemory,
) -> None:
    mira = View(tavern, "mira")
    assert await related_to_mira(mira) == {"kettle", "oswin"}
    hot = await mira.hot_context("mira")
    assert "Red Kettle" in hot.identity.text and "Oswin" in hot.identity.text
    await tavern.sessions.set_dm_only("s1", True)
    # What was learned in s1 is the DM's alone now, in every read of hers.
    assert await related_to_mira(mira) == {"oswin"}
    hot = await mira.hot_context("mira")
    assert "Red Kettle" not in hot.identity.text and "Oswin" in hot.identity.text
    assert "s1" in await (await mira.reading()).withheld_sessions()
    await tavern.sessions.set_dm_only("s1", False)
    assert await related_to_mira(mira) == {"kettle", "oswin"}
    assert "Red Kettle" in (await mira.hot_context("mira")).identity.text


async def test_an_entity_shown_is_read_once_while_nothing_changes(
    tavern: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[list[str]] = []
    read_snapshots = GraphQueries.snapshots

    async def counted(self: GraphQueries, entity_ids: list[str], **kwargs: object) -> object:
        reads.append(list(entity_ids))
        return await read_snapshots(self, entity_ids, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(GraphQueries, "snapshots", counted)
    mira, dm = View(tavern, "mira"), View(tavern)
    assert await related_to_mira(mira) == {"kettle", "oswin"}
    assert await related_to_mira(mira) == {"kettle", "oswin"}
    assert reads == [["mira"]]
    # Each viewer is shown its own.
    await related_to_mira(dm)
    assert len(reads) == 2
    # How it matched is the call's own, not the one kept.
    by_type = await mira.query_entities(TEN, ONE_HOP, entity_type=EntityType.NPC)
    assert {e.id: e.match for e in by_type.entities}["mira"] == "type"
    assert reads[2:] == [["oswin"]]  # Mira is kept, with as many relationships
    # A change by anyone is shown at the next call.
    await tavern.graph.upsert_entity(NewEntity(id="well", type=EntityType.LOCATION, name="Well"))
    await tavern.graph.upsert_relationship(
        NewRelationship(source_id="mira", target_id="well", rel_type="LIVES_AT")
    )
    assert await related_to_mira(mira) == {"kettle", "oswin", "well"}
    assert len(reads) == 4


async def test_a_walk_is_read_once_while_nothing_changes(
    tavern: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks: list[str] = []
    walk = GraphQueries.neighbours

    async def counted(self: GraphQueries, entity_id: str, **kwargs: object) -> object:
        walks.append(entity_id)
        return await walk(self, entity_id, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(GraphQueries, "neighbours", counted)
    oswin = View(tavern, "oswin")
    two_hops = clamp(2, 3)

    async def around_mira() -> dict[str, tuple[int | None, list[str] | None]]:
        found = await oswin.query_entities(TEN, two_hops, related_to="Mira")
        return {e.id: (e.hops, e.path) for e in found.entities}

    assert await around_mira() == {
        "kettle": (1, ["mira", "kettle"]),
        "oswin": (1, ["mira", "oswin"]),
    }
    assert await around_mira() == await around_mira()
    assert walks == ["mira"]
    # Another hop away, told by anyone, is walked at the next call.
    await tavern.graph.upsert_entity(NewEntity(id="well", type=EntityType.LOCATION, name="Well"))
    await tavern.graph.upsert_relationship(
        NewRelationship(source_id="oswin", target_id="well", rel_type="LIVES_AT")
    )
    assert (await around_mira())["well"] == (2, ["mira", "oswin", "well"])
    assert walks == ["mira", "mira"]


async def test_a_session_made_dm_only_since_the_counter_was_read_is_the_dm_s(
    tavern: CampaignMemory,
) -> None:
    """The sessions an NPC may not read are as of its call's counter; the session's own row,
    read after, says who may read it now."""
    from glyphoxa_mcp.errors import NotFoundError
    from glyphoxa_mcp.views.session_summary import known_session

    read_before = await (await View(tavern, "mira").reading()).withheld_sessions()
    await tavern.sessions.set_dm_only("s1", True)
    with pytest.raises(NotFoundError) as refused:
        await known_session(tavern, "s1", read_before, npc=True)
    assert "s1," not in str(refused.value) and "s2" in str(refused.value)
    assert (await known_session(tavern, "s1", frozenset(), npc=False)).id == "s1"
