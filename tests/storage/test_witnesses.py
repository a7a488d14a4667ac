"""Who hears a line (sql/032): in a witnessed campaign the NPCs present in its scene and the
NPC who said it, kept by the database as scenes, speakers, the DM's choice and the campaign's
setting change; passages follow their lines; word of what a scene taught travels along the
relationships that carry news."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import pytest

from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.models import (
    NewChunk,
    NewEntry,
    NewFact,
    NewRelationship,
    NewSession,
    Provenance,
    SearchFilters,
    Visibility,
)
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory

START = datetime(2026, 3, 7, 19, tzinfo=UTC)
DIMENSION = 4  # the `db` fixture's


async def sample(db: Database) -> CampaignMemory:
    """The sample campaign (a new campaign: witnessed) with an empty session 's1'."""
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db, file, "demo")
    memory = CampaignMemory(db, "demo")
    await memory.sessions.upsert(NewSession(id="s1", started_at=START))
    return memory


def said(minute: float, speaker: str, text: str, npc: str | None = None) -> NewEntry:
    return NewEntry(
        speaker_id=npc or speaker.lower(),
        speaker_name=speaker,
        text=text,
        npc_id=npc,
        spoken_at=START + timedelta(minutes=minute),
    )


def scene(minute: float, *present: str, location: str | None = None) -> Scene:
    return Scene(
        session_id="s1",
        started_at=START + timedelta(minutes=minute),
        present=present,
        location_id=location,
    )


async def heard_by(memory: CampaignMemory) -> dict[str, list[str] | None]:
    rows = await memory.db.pool.fetch(
        "SELECT text, heard_by FROM session_entries WHERE campaign_id = $1 ORDER BY id",
        memory.campaign_id,
    )
    return {row["text"]: row["heard_by"] for row in rows}


async def readable(memory: CampaignMemory, npc: str) -> set[str]:
    """The lines `npc` reads through the session log's search and its last minutes."""
    found = await memory.log.search("plan", SearchFilters(reader=npc), limit=50)
    recent = await memory.log.recent("s1", window=timedelta(hours=2), reader=npc)
    return {m.entry.text for m in found} | {e.text for e in recent}


async def test_a_line_is_heard_by_those_present_in_its_scene_and_by_who_said_it(
    db: Database,
) -> None:
    memory = await sample(db)
    await memory.scenes.record([scene(0, "brannoch", location="red-kettle"), scene(10, "ysolde")])
    await memory.log.append_many(
        "s1",
        [
            said(1, "Kael", "Our plan: the cellar at midnight."),
            said(2, "Brannoch", "I will leave the plan and the door open.", "brannoch"),
            said(11, "Lyra", "The plan changes: we go by the river."),
            said(12, "Old Berrit", "Nobody asked me about the plan.", "berrit"),
        ],
    )
    assert await heard_by(memory) == {
        "Our plan: the cellar at midnight.": ["brannoch"],
        "I will leave the plan and the door open.": ["brannoch"],
        # Berrit speaks in that scene: he was there, and heard what was said in it.
        "The plan changes: we go by the river.": ["berrit", "ysolde"],
        "Nobody asked me about the plan.": ["berrit", "ysolde"],
    }
    assert await readable(memory, "brannoch") == {
        "Our plan: the cellar at midnight.",
        "I will leave the plan and the door open.",
    }
    assert await readable(memory, "berrit") == {
        "The plan changes: we go by the river.",
        "Nobody asked me about the plan.",
    }
    assert await readable(memory, "maelis") == set()
    # The DM reads every line.
    assert len(await memory.log.search("plan", SearchFilters(), limit=50)) == 4


async def test_lines_outside_any_scene_are_heard_by_the_npcs_who_speak_in_the_session(
    db: Database,
) -> None:
    memory = await sample(db)
    await memory.log.append_many("s1", [said(0, "Kael", "The plan is simple.")])
    assert await heard_by(memory) == {"The plan is simple.": []}
    # An NPC who speaks later hears the lines before it too: it was at the table.
    await memory.log.append_many("s1", [said(1, "Brannoch", "A fine plan.", "brannoch")])
    await memory.log.append_many("s1", [said(2, "Old Berrit", "Plan? What plan?", "berrit")])
    assert await heard_by(memory) == {
        "The plan is simple.": ["berrit", "brannoch"],
        "A fine plan.": ["berrit", "brannoch"],
        "Plan? What plan?": ["berrit", "brannoch"],
    }
    assert await readable(memory, "ysolde") == set()


async def test_an_npc_whose_lines_are_all_removed_no_longer_hears_the_session(
    db: Database,
) -> None:
    memory = await sample(db)
    ids = await memory.log.append_many(
        "s1",
        [
            said(0, "Kael", "The plan is simple."),
            said(1, "Brannoch", "A fine plan.", "brannoch"),
            # A player's aside that speech-to-text gave to Old Berrit.
            said(2, "Old Berrit", "Plan? What plan?", "berrit"),
        ],
    )
    await db.pool.execute("DELETE FROM session_entries WHERE id = $1", ids[2])
    assert await heard_by(memory) == {
        "The plan is simple.": ["brannoch"],
        "A fine plan.": ["brannoch"],
    }
    assert await readable(memory, "berrit") == set()


async def test_scenes_changed_afterwards_move_who_heard_the_lines_and_passages(
    db: Database,
) -> None:
    memory = await sample(db)
    [first, second] = await memory.log.append_many(
        "s1",
        [said(1, "Kael", "The plan: the cellar."), said(2, "Lyra", "The plan: the river.")],
    )
    await memory.index.upsert(
        [
            NewChunk(
                session_id="s1",
                content="Kael: The plan: the cellar.\nLyra: The plan: the river.",
                embedding=[0.5] * DIMENSION,
                entry_ids=(first, second),
                started_at=START,
            )
        ]
    )

    async def passage_readers() -> list[str] | None:
        value: list[str] | None = await db.pool.fetchval(
            "SELECT heard_by FROM chunks WHERE campaign_id = 'demo'"
        )
        return value

    assert await passage_readers() == []
    await memory.scenes.record([scene(0, "brannoch", "ysolde")])
    assert await passage_readers() == ["brannoch", "ysolde"]
    # Ysolde left before Lyra spoke: the passage holds a line she did not hear.
    await memory.scenes.record([scene(1.5, "brannoch")])
    assert await passage_readers() == ["brannoch"]
    # The DM says Ysolde overheard that one line after all (the DM's hearers replace the
    # scene's).
    await db.pool.execute(
        "UPDATE session_entries SET heard_by_dm = '{brannoch,ysolde}' WHERE id = $1", second
    )
    assert (await heard_by(memory))["The plan: the river."] == ["brannoch", "ysolde"]
    assert await passage_readers() == ["brannoch", "ysolde"]
    await db.pool.execute("DELETE FROM scenes WHERE campaign_id = 'demo'")
    assert (await heard_by(memory))["The plan: the cellar."] == []


async def test_a_shared_campaign_lets_every_npc_read_every_line_and_can_turn_back(
    db: Database,
) -> None:
    memory = await sample(db)
    await memory.scenes.record([scene(0, "brannoch")])
    await memory.log.append_many("s1", [said(1, "Kael", "The plan: the cellar.")])
    campaigns = Campaigns(db)
    shared = await campaigns.configure_knowledge("demo", knowledge=Knowledge.SHARED)
    assert shared.knowledge is Knowledge.SHARED
    assert await heard_by(memory) == {"The plan: the cellar.": None}
    assert await readable(memory, "maelis") == {"The plan: the cellar."}
    await campaigns.configure_knowledge("demo", knowledge=Knowledge.WITNESSED)
    assert await readable(memory, "maelis") == set()
    assert await readable(memory, "brannoch") == {"The plan: the cellar."}


async def test_knowledge_settings_are_checked_and_kept(db: Database) -> None:
    await sample(db)
    campaigns = Campaigns(db)
    with pytest.raises(InvalidInputError, match="news_hops must be from 0"):
        await campaigns.configure_knowledge("demo", news_hops=4)
    with pytest.raises(InvalidInputError, match="news_types"):
        await campaigns.configure_knowledge("demo", news_types=["not a type!"])
    changed = await campaigns.configure_knowledge(
        "demo", news_hops=2, news_types=["sworn to", "KNOWS", "SWORN_TO"]
    )
    assert (changed.knowledge, changed.news_hops, changed.news_types) == (
        Knowledge.WITNESSED,
        2,
        ("SWORN_TO",),
    )
    # A campaign made before scenes (on upgrade) keeps today's behaviour: see
    # tests/db/test_migrations.py; a new one is witnessed.
    assert (await campaigns.ensure("fresh")).knowledge is Knowledge.WITNESSED


async def test_word_of_a_scene_reaches_those_tied_to_a_witness_and_those_living_there(
    db: Database,
) -> None:
    """In the sample: Ysolde KNOWS Brannoch; Ilvenna is his child and lives at the Red
    Kettle, as Old Berrit does; Berrit KNOWS Brannoch (two ties from Ysolde)."""
    memory = await sample(db)
    await memory.scenes.record([scene(0, "ysolde", location="greywater-crossing")])
    [crossing] = await memory.scenes.of_session("s1")
    assert crossing.heard_of_by("brannoch") == (True, "ysolde")
    assert crossing.heard_of_by("berrit") == (False, None)
    assert crossing.heard_of_by("ysolde") == (False, None)  # she was there

    await memory.scenes.record([scene(5, "brannoch", location="red-kettle")])
    [_, inn] = await memory.scenes.of_session("s1")
    assert inn.heard_of_by("ilvenna") == (True, "brannoch")  # his child, and she lives there
    assert inn.heard_of_by("berrit")[0]  # he knows Brannoch, and lives there
    assert inn.heard_of_by("ysolde") == (True, "brannoch")

    await Campaigns(db).configure_knowledge("demo", news_hops=0)
    await memory.scenes.record([scene(5, "brannoch", location="red-kettle")])
    [_, inn] = await memory.scenes.of_session("s1")
    assert inn.heard_of_by("ysolde") == (False, None)
    assert inn.heard_of_by("berrit") == (True, None)  # word around the place he lives


@pytest.mark.parametrize(
    ("membership", "heard"),
    [
        (Visibility(), (True, "wendrith")),
        (Visibility(secret=True, known_by=("maelis",)), (True, "wendrith")),
        # The DM's alone: Maelis may not learn Wendrith is a sister, so no word through it.
        (Visibility(secret=True), (False, None)),
        (Visibility(known_by=("wendrith",)), (False, None)),
    ],
)
async def test_word_leaves_a_group_only_for_members_who_may_know_the_teller_is_in_it(
    db: Database, membership: Visibility, heard: tuple[bool, str | None]
) -> None:
    """In the sample Maelis is the Tide Sisters' only member; Wendrith joins them."""
    memory = await sample(db)
    await memory.graph.upsert_relationship(
        NewRelationship(
            source_id="wendrith",
            target_id="tide-sisters",
            rel_type="MEMBER_OF",
            visibility=membership,
        )
    )
    await memory.scenes.record([scene(0, "wendrith")])
    [harbour] = await memory.scenes.of_session("s1")
    assert harbour.heard_of_by("maelis") == heard
    assert harbour.heard_of_by("tarquel") == (True, "wendrith")  # they know each other


async def test_a_scenes_word_follows_the_ties_there_are_when_the_session_is_taught(
    db: Database,
) -> None:
    memory = await sample(db)
    await memory.scenes.record([scene(0, "ysolde", location="greywater-crossing")])
    [crossing] = await memory.scenes.of_session("s1")
    assert crossing.heard_of_by("brannoch") == (True, "ysolde")
    assert await memory.graph.delete_relationship("ysolde", "KNOWS", "brannoch")
    await memory.curation.teach_witnessed("s1")
    [crossing] = await memory.scenes.of_session("s1")
    assert crossing.heard_of_by("brannoch") == (False, None)


async def test_what_cites_no_line_is_taught_to_those_who_heard_every_line(
    db: Database,
) -> None:
    memory = await sample(db)
    await memory.scenes.record([scene(0, "ysolde", "maelis"), scene(5, "brannoch", "maelis")])
    await memory.log.append_many(
        "s1",
        [
            said(1, "Captain Ysolde", "The ruts lead to the salt caves.", "ysolde"),
            said(6, "Brannoch", "Nobody pays at the Red Kettle tonight.", "brannoch"),
        ],
    )
    drawn = Provenance(session_id="s1", confidence=0.9, source="inferred")
    fact = await memory.graph.upsert_fact(
        NewFact(text="The caravan's ruts lead to the caves.", session_id="s1", provenance=drawn)
    )
    assert await memory.curation.teach_witnessed("s1") == 1
    [taught] = [f for f in await memory.graph.current_facts() if f.id == fact.id]
    # Not Ysolde's nor Brannoch's: either scene may be where it was said.
    assert taught.visibility.known_by == ("maelis",)


async def test_what_a_scene_taught_is_known_to_its_witnesses_and_heard_of_by_their_ties(
    db: Database,
) -> None:
    memory = await sample(db)
    await memory.scenes.record([scene(0, "ysolde", location="greywater-crossing")])
    [line_id] = await memory.log.append_many(
        "s1", [said(1, "Captain Ysolde", "The ruts lead to the salt caves.", "ysolde")]
    )
    learned = Provenance(session_id="s1", confidence=0.9, source="stated", entry_id=line_id)
    taught = await memory.graph.upsert_fact(
        NewFact(text="Wagon ruts lead to the old salt caves.", session_id="s1", provenance=learned)
    )
    decided = await memory.graph.upsert_fact(
        NewFact(
            text="The DM's own note about the caves.",
            session_id="s1",
            provenance=Provenance(session_id="s1", source="dm"),
        )
    )
    assert await memory.curation.teach_witnessed("s1") == 1
    facts = {f.id: f for f in await memory.graph.current_facts()}
    visibility = facts[taught.id].visibility
    assert visibility.known_by == ("brannoch", "ysolde")
    assert visibility.heard_of_by("brannoch") == (True, "ysolde")
    assert visibility.heard_of_by("ysolde") == (False, None)
    assert facts[decided.id].visibility.known_by == ()  # the DM's: left as the DM wrote it
    # Taught once: the DM narrowing it afterwards is not undone.
    assert await memory.curation.teach_witnessed("s1") == 0


async def test_an_npc_who_speaks_in_a_scene_is_present_in_it_and_only_in_it(
    db: Database,
) -> None:
    memory = await sample(db)
    await memory.log.append_many(
        "s1",
        [
            said(1, "Brannoch", "The plan is the cellar.", "brannoch"),
            said(11, "Captain Ysolde", "The plan is the river.", "ysolde"),
        ],
    )
    # Scenes recorded after their lines, together (a transcript's): each speaker joins the
    # scene it spoke in, not the first one recorded.
    await memory.scenes.record([scene(0, location="red-kettle"), scene(10, "berrit")])
    inn, later = await memory.scenes.of_session("s1")
    assert (inn.present, later.present) == (("brannoch",), ("berrit", "ysolde"))
    # A line said later in a scene brings its speaker in; the DM taking it out stands.
    await memory.log.append_many("s1", [said(12, "Maelis", "What plan?", "maelis")])
    assert "maelis" in (await memory.scenes.of_session("s1"))[1].present
    await memory.scenes.record([scene(0, location="red-kettle")])
    assert (await memory.scenes.of_session("s1"))[0].present == ()
    assert await readable(memory, "brannoch") == {"The plan is the cellar."}


async def test_scenes_changed_while_lines_arrive_leave_every_line_heard_right(
    db: Database,
) -> None:
    """A DM changing scenes while the recorder appends lines of new speakers: both hear the
    session again, one at a time, and what is stored is what hearing it from nothing gives."""
    memory = await sample(db)
    npcs = ["brannoch", "berrit", "ysolde", "maelis", "ilvenna", "wendrith"]

    async def record(index: int) -> None:
        npc = npcs[index % len(npcs)]
        await memory.log.append_many("s1", [said(index, npc.title(), f"Line {index}.", npc)])

    async def rescene(index: int) -> None:
        await memory.scenes.record([scene(index, npcs[(index + 1) % len(npcs)])])

    async with anyio.create_task_group() as group:
        for index in range(12):
            group.start_soon(record, index)
            group.start_soon(rescene, index)
    stored = await db.pool.fetch(
        "SELECT heard_by, glyphoxa_line_heard_by(campaign_id, session_id, spoken_at, npc_id, "
        "speaker_id, heard_by_dm) AS again FROM session_entries WHERE campaign_id = 'demo'"
    )
    assert len(stored) == 12
    assert all(row["heard_by"] == row["again"] for row in stored)
