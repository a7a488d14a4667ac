"""A small village graph shared by the L3 tests.

grimjaw -MEMBER_OF-> smiths-guild -ALLIED_WITH- town-watch (stored both ways)
grimjaw -LOCATED_AT-> red-kettle
mira -KNOWS-> grimjaw ; grimjaw -KNOWS-> mira (a cycle)
vask -MEMBER_OF-> cult (secret, known only by vask)
grimjaw -OWNS-> ember-blade (secret from everyone)
"""

from __future__ import annotations

from glyphoxa_mcp.domain.models import NewEntity, NewFact, NewRelationship, Provenance, Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.storage.memory import CampaignMemory

ENTITIES = [
    NewEntity(
        type=EntityType.NPC,
        name="Grimjaw",
        aliases=("the blacksmith",),
        attributes={"occupation": "blacksmith", "personality": "gruff"},
    ),
    NewEntity(type=EntityType.NPC, name="Mira"),
    NewEntity(type=EntityType.NPC, name="Captain Oriel Vask", id="vask", aliases=("Vask",)),
    NewEntity(type=EntityType.FACTION, name="Smiths Guild"),
    NewEntity(type=EntityType.FACTION, name="Town Watch"),
    NewEntity(
        type=EntityType.FACTION, name="Cult", visibility=Visibility(secret=True, known_by=("vask",))
    ),
    NewEntity(type=EntityType.LOCATION, name="Red Kettle"),
    NewEntity(type=EntityType.ITEM, name="Ember Blade"),
]
SECRET = Visibility(secret=True)


def rel(source: str, rel_type: str, target: str, **extra: object) -> NewRelationship:
    return NewRelationship(source_id=source, target_id=target, rel_type=rel_type, **extra)


RELATIONSHIPS = [
    rel("grimjaw", "MEMBER_OF", "smiths-guild"),
    rel("smiths-guild", "ALLIED_WITH", "town-watch"),
    rel("grimjaw", "LOCATED_AT", "red-kettle"),
    rel("mira", "KNOWS", "grimjaw"),
    rel("grimjaw", "KNOWS", "mira"),
    rel("vask", "MEMBER_OF", "cult", visibility=Visibility(secret=True, known_by=("vask",))),
    rel(
        "grimjaw",
        "OWNS",
        "ember-blade",
        visibility=SECRET,
        provenance=Provenance(source="inferred", confidence=0.4, session_id="s1"),
    ),
]
FACTS = [
    NewFact(subject_id="grimjaw", text="Grimjaw forged the town gate's hinges.", story_day=3),
    NewFact(subject_id="grimjaw", text="Grimjaw once served in the Town Watch.", story_day=1),
    NewFact(
        subject_id="grimjaw",
        text="Grimjaw hides the Ember Blade under his anvil.",
        visibility=SECRET,
    ),
    NewFact(subject_id="town-watch", text="The Town Watch patrols the bridge at night."),
    NewFact(
        subject_id="cult",
        text="The cult meets beneath the Red Kettle.",
        visibility=Visibility(secret=True, known_by=("vask",)),
    ),
]


async def build_village(memory: CampaignMemory) -> None:
    for entity in ENTITIES:
        await memory.graph.upsert_entity(entity)
    for relationship in RELATIONSHIPS:
        await memory.graph.upsert_relationship(relationship)
    for fact in FACTS:
        await memory.graph.upsert_fact(fact)
