"""Putting a campaign file into the knowledge graph: validated first, all or nothing.

Every reference is resolved before anything is written, and the whole load runs in one
transaction. Items are compared with what is stored and written only when they differ, so
loading the same file again changes nothing, and an edited file updates in place and says
what changed. Items the file no longer mentions are left alone (the DM may have added
them by command); facts are identified by subject and text.
"""

from __future__ import annotations

from glyphoxa_mcp.campaign.file_format import CampaignFile, Visible
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import (
    Entity,
    Fact,
    NewEntity,
    NewFact,
    NewRelationship,
    Provenance,
    Relationship,
    Visibility,
)
from glyphoxa_mcp.domain.reports import LoadAction, LoadChange, LoadReport
from glyphoxa_mcp.domain.vocabulary import checked_relationship_type, slugify
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.entity_resolver import EntityResolver
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory

MAX_ENTITIES = 100_000


class _Rollback(Exception):
    def __init__(self, report: LoadReport) -> None:
        self.report = report


def _provenance(confidence: float) -> Provenance:
    """What the DM writes is confirmed, unless the DM marks it as less than certain."""
    return Provenance(confidence=confidence, source="dm", dm_confirmed=confidence >= 1.0)


class References:
    """Resolves the names a file uses to entity ids (see EntityResolver)."""

    def __init__(self, entities: list[Entity]) -> None:
        self._resolver = EntityResolver(entities)

    def resolve(self, reference: str, where: str) -> str:
        return self._resolver.resolve(reference, where).id

    def visibility(self, item: Visible, where: str) -> Visibility:
        return Visibility(
            secret=item.secret,
            known_by=tuple(self.resolve(name, f"{where}.known_by") for name in item.known_by),
        )


def campaign_of(file: CampaignFile, given: str | None) -> tuple[str, str]:
    """The campaign id and name: from the file, the command line, or both when they agree."""
    named = file.campaign.id if file.campaign else None
    if named and given and named != given:
        raise InvalidInputError(
            f"The file is for campaign {named!r}, but {given!r} was asked for.", field="campaign"
        )
    campaign_id = named or given
    if campaign_id is None:
        raise InvalidInputError(
            "Name the campaign: a 'campaign: {id, name}' block in the file, or --campaign.",
            field="campaign",
        )
    return campaign_id, file.campaign.name if file.campaign else campaign_id


async def load_campaign(
    db: Database,
    file: CampaignFile,
    campaign_id: str | None = None,
    *,
    dry_run: bool = False,
    embedder: Embedder | None = None,
) -> LoadReport:
    """With an `embedder`, the facts are embedded once the load is committed (when it
    fails, the facts are stored all the same and embedded later: see
    pipeline/fact_embedding.py)."""
    campaign_id, name = campaign_of(file, campaign_id)
    try:
        async with db.transaction() as tx:
            await Campaigns(tx).ensure(campaign_id, name)
            changes = await _apply(CampaignMemory(tx, campaign_id), file)
            report = LoadReport(campaign_id, tuple(changes), dry_run)
            if dry_run:
                raise _Rollback(report)
    except _Rollback as rollback:
        return rollback.report
    await embed_new(db, embedder, campaign_id)
    return report


async def _apply(memory: CampaignMemory, file: CampaignFile) -> list[LoadChange]:
    graph = memory.graph
    stored = {e.id: e for e in await graph.find_entities(limit=MAX_ENTITIES)}
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
    refs = References(planned + [e for e in stored.values() if e.id not in {p.id for p in planned}])
    entities = [
        NewEntity(
            id=p.id,
            type=p.type,
            name=p.name,
            aliases=p.aliases,
            attributes=p.attributes,
            visibility=refs.visibility(entry, f"entities[{i}]"),
        )
        for i, (p, entry) in enumerate(zip(planned, file.entities, strict=True))
    ]
    relationships = [
        NewRelationship(
            source_id=refs.resolve(rel.source, f"relationships[{i}].source"),
            target_id=refs.resolve(rel.target, f"relationships[{i}].target"),
            rel_type=checked_relationship_type(rel.type, f"relationships[{i}].type"),
            attributes=rel.attributes,
            provenance=_provenance(rel.confidence),
            visibility=refs.visibility(rel, f"relationships[{i}]"),
        )
        for i, rel in enumerate(file.relationships)
    ]
    facts = [
        NewFact(
            subject_id=refs.resolve(f.subject, f"facts[{i}].subject") if f.subject else None,
            text=f.text,
            story_day=f.story_day,
            story_label=f.story_label,
            provenance=_provenance(f.confidence),
            visibility=refs.visibility(f, f"facts[{i}]"),
        )
        for i, f in enumerate(file.facts)
    ]
    changes = []
    for entity in entities:
        assert entity.id is not None
        before = stored.get(entity.id)
        action = _entity_action(before, entity)
        if action != "unchanged":
            await graph.upsert_entity(entity)
        changes.append(LoadChange("entity", action, entity.name))
    links = {(r.source_id, r.target_id, r.rel_type): r for r in await graph.all_relationships()}
    for rel in relationships:
        action = _relationship_action(links.get((rel.source_id, rel.target_id, rel.rel_type)), rel)
        if action != "unchanged":
            await graph.upsert_relationship(rel)
        changes.append(
            LoadChange("relationship", action, f"{rel.source_id} {rel.rel_type} {rel.target_id}")
        )
    known_facts = {(f.subject_id, f.text): f for f in await graph.current_facts()}
    for fact in facts:
        action = _fact_action(known_facts.get((fact.subject_id, fact.text)), fact)
        if action != "unchanged":
            await graph.upsert_fact(fact)
        changes.append(LoadChange("fact", action, fact.text))
    return changes


def _entity_action(before: Entity | None, after: NewEntity) -> LoadAction:
    if before is None:
        return "created"
    same = (
        before.type == after.type
        and before.name == after.name
        and before.aliases == after.aliases
        and before.attributes == after.attributes
        and before.visibility == after.visibility
    )
    return "unchanged" if same else "updated"


def _same_provenance(before: Provenance, after: Provenance) -> bool:
    return (before.confidence, before.source, before.dm_confirmed) == (
        after.confidence,
        after.source,
        after.dm_confirmed,
    )


def _relationship_action(before: Relationship | None, after: NewRelationship) -> LoadAction:
    if before is None:
        return "created"
    same = (
        before.attributes == after.attributes
        and _same_provenance(before.provenance, after.provenance)
        and before.visibility == after.visibility
    )
    return "unchanged" if same else "updated"


def _fact_action(before: Fact | None, after: NewFact) -> LoadAction:
    if before is None:
        return "created"
    same = (
        (before.story_day, before.story_label) == (after.story_day, after.story_label)
        and _same_provenance(before.provenance, after.provenance)
        and before.visibility == after.visibility
    )
    return "unchanged" if same else "updated"
