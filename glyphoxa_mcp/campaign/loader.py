"""Putting a campaign file into the knowledge graph.

Every reference is resolved before anything is written, so a file that names an unknown
entity is refused whole. Loading is idempotent: entities, relationships and facts are
upserted by their identity, so loading the same file again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from glyphoxa_mcp.campaign.file_format import CampaignFile, Visible
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.names import compact, match_names
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.models import (
    Entity,
    NewEntity,
    NewFact,
    NewRelationship,
    Provenance,
    Visibility,
)
from glyphoxa_mcp.storage.vocabulary import checked_relationship_type, slugify


@dataclass(frozen=True)
class LoadReport:
    campaign_id: str
    entities: int
    relationships: int
    facts: int


def _provenance(confidence: float) -> Provenance:
    """What the DM writes is confirmed, unless the DM marks it as less than certain."""
    return Provenance(confidence=confidence, source="dm", dm_confirmed=confidence >= 1.0)


class References:
    """Resolves the names a file uses to entity ids: exact name, alias or id only."""

    def __init__(self, entities: list[Entity]) -> None:
        self.entities = entities
        self._by_key: dict[str, str] = {}
        for entity in entities:
            for spelling in (entity.id, entity.name, *entity.aliases):
                self._by_key.setdefault(compact(spelling), entity.id)

    def resolve(self, reference: str, where: str) -> str:
        found = self._by_key.get(compact(reference))
        if found is not None:
            return found
        near = [m.entity.name for m in match_names(reference, self.entities, limit=3)]
        hint = f" Did you mean {', '.join(near)}?" if near else ""
        raise InvalidInputError(f"{where}: no entity named {reference!r}.{hint}", field=where)

    def visibility(self, item: Visible, where: str) -> Visibility:
        return Visibility(
            secret=item.secret,
            known_by=tuple(self.resolve(name, f"{where}.known_by") for name in item.known_by),
        )


async def load_campaign(
    memory: CampaignMemory, campaigns: Campaigns, file: CampaignFile
) -> LoadReport:
    if file.campaign.id != memory.campaign_id:
        raise InvalidInputError(
            f"The file is for campaign {file.campaign.id!r}, not {memory.campaign_id!r}.",
            field="campaign.id",
        )
    planned = [
        Entity(
            id=entry.id or slugify(entry.name),
            type=entry.type,
            name=entry.name,
            aliases=entry.aliases,
            attributes=entry.attributes,
            visibility=Visibility(),
        )
        for entry in file.entities
    ]
    existing = await memory.queries.entity_names()
    references = References(planned + existing)
    entities = [
        NewEntity(
            id=entity.id,
            type=entity.type,
            name=entity.name,
            aliases=entity.aliases,
            attributes=entity.attributes,
            visibility=references.visibility(entry, f"entities[{i}]"),
        )
        for i, (entity, entry) in enumerate(zip(planned, file.entities, strict=True))
    ]
    relationships = [
        NewRelationship(
            source_id=references.resolve(rel.source, f"relationships[{i}].source"),
            target_id=references.resolve(rel.target, f"relationships[{i}].target"),
            rel_type=checked_relationship_type(rel.type, f"relationships[{i}].type"),
            attributes=rel.attributes,
            provenance=_provenance(rel.confidence),
            visibility=references.visibility(rel, f"relationships[{i}]"),
        )
        for i, rel in enumerate(file.relationships)
    ]
    facts = [
        NewFact(
            subject_id=references.resolve(fact.subject, f"facts[{i}].subject")
            if fact.subject
            else None,
            text=fact.text,
            story_day=fact.story_day,
            story_label=fact.story_label,
            provenance=_provenance(fact.confidence),
            visibility=references.visibility(fact, f"facts[{i}]"),
        )
        for i, fact in enumerate(file.facts)
    ]
    await campaigns.ensure(file.campaign.id, file.campaign.name)
    for entity in entities:
        await memory.graph.upsert_entity(entity)
    for relationship in relationships:
        await memory.graph.upsert_relationship(relationship)
    for fact in facts:
        await memory.graph.upsert_fact(fact)
    return LoadReport(memory.campaign_id, len(entities), len(relationships), len(facts))
