"""Putting a campaign file into the knowledge graph: validated first, all or nothing.

The whole file is checked before anything is written, and every problem is reported at
once: each reference resolves to one entity (known_by to an NPC), each relationship type is
built in or declared by the file, and no entity, relationship or fact is listed twice. The
load runs in one transaction. Items are compared with what is stored and written only when
they differ, so loading the same file again changes nothing, and an edited file updates in
place and says what changed. Items the file no longer mentions are left alone (the DM may
have added them by command); facts are identified by subject and text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import get_close_matches

from glyphoxa_mcp.campaign.file_format import CampaignFile, Visible
from glyphoxa_mcp.campaign.problems import FileProblems, Path, Problem, field_name, refuse
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
from glyphoxa_mcp.domain.vocabulary import (
    RELATIONSHIP_TYPE_PATTERN,
    RELATIONSHIP_TYPES,
    EntityType,
    is_bidirectional,
    normalise_relationship_type,
    slugify,
)
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.fact_embedding import embed_new
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.entity_resolver import EntityResolver
from glyphoxa_mcp.recall.names import compact
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory

MAX_ENTITIES = 100_000


class _Rollback(Exception):
    def __init__(self, report: LoadReport) -> None:
        self.report = report


def _provenance(confidence: float) -> Provenance:
    """What the DM writes is confirmed, unless the DM marks it as less than certain."""
    return Provenance(confidence=confidence, source="dm", dm_confirmed=confidence >= 1.0)


class _Check:
    """Resolves the file's references to entities and collects, rather than raises, every
    problem found on the way, each at its place in the file."""

    def __init__(self, file: CampaignFile) -> None:
        self.file = file
        self._resolver = EntityResolver([])
        self.problems: list[Problem] = list(file.read_problems)
        # How the file refers to entities reported where they are listed.
        self._reported: set[str] = set()

    def use_entities(self, entities: list[Entity]) -> None:
        """The entities the file's names may refer to."""
        self._resolver = EntityResolver(entities)

    def report(self, path: Path, rule: str, *, as_written: bool = False) -> None:
        self.problems.append(self.file.problem(path, rule, as_written=as_written))

    def entity(self, reference: str, path: Path, *, as_written: bool = False) -> Entity | None:
        where = field_name(path if as_written else self.file.written_path(path))
        try:
            return self._resolver.resolve(reference, where)
        except InvalidInputError as exc:
            # An entity whose own entry broke a rule is reported there, not at each mention.
            spelling = compact(reference)
            if not (self.file.is_unchecked(spelling) or spelling in self._reported):
                self.report(path, exc.message.removeprefix(f"{where}: "), as_written=as_written)
            return None

    def known_by(
        self, references: Sequence[object], path: Path, *, as_written: bool = False
    ) -> tuple[str, ...]:
        """The ids of the NPCs named (a name that is not one is reported)."""
        ids = []
        for i, reference in enumerate(references):
            if not isinstance(reference, str):
                continue  # reported when the file was read
            place = (*path, "known_by", i)
            found = self.entity(reference, place, as_written=as_written)
            if found is None:
                continue
            if found.type != EntityType.NPC:
                self.report(
                    place,
                    f"{found.name!r} is a {found.type.value}: known_by names the NPCs who know.",
                    as_written=as_written,
                )
            ids.append(found.id)
        return tuple(ids)

    def visibility(self, item: Visible, path: Path) -> Visibility:
        return Visibility(secret=item.secret, known_by=self.known_by(item.known_by, path))

    def relationship_type(
        self, written: str, path: Path, declared: set[str], *, as_written: bool = False
    ) -> str | None:
        """The type normalised, or None when it cannot be one (reported)."""
        normalised = normalise_relationship_type(written)
        if not re.match(RELATIONSHIP_TYPE_PATTERN, normalised):
            self.report(
                path,
                f"{written!r} is not a relationship type: use UPPER_SNAKE words, such as "
                f"{', '.join(RELATIONSHIP_TYPES)}.",
                as_written=as_written,
            )
            return None
        if normalised not in RELATIONSHIP_TYPES and normalised not in declared:
            near = get_close_matches(normalised, [*RELATIONSHIP_TYPES, *declared], n=1)
            hint = f" Did you mean {near[0]}?" if near else ""
            self.report(
                path,
                f"{written!r} ({normalised}) is neither a built-in relationship type "
                f"({', '.join(RELATIONSHIP_TYPES)}) nor one the file declares under "
                f"relationship_types.{hint}",
                as_written=as_written,
            )
        return normalised

    def listed_twice(self, entity: Entity, path: Path, first: Path, what: str) -> None:
        self.repeated(path, first, what)
        self._reported.update(compact(s) for s in (entity.id, entity.name, *entity.aliases))

    def repeated(self, path: Path, first: Path, what: str) -> None:
        earlier = self.file.problem(first, "")
        self.report(
            path,
            f"{what} is already in the file at line {earlier.line} ({earlier.field}): "
            "each is listed once.",
        )


def campaign_of(file: CampaignFile, given: str | None) -> tuple[str, str]:
    """The campaign id and name: from the file, the command line, or both when they agree."""
    named = file.campaign.id if file.campaign else None
    problem = None
    if named and given and named != given:
        problem = file.problem(
            ("campaign", "id"), f"the file is for campaign {named!r}, but {given!r} was asked for."
        )
    campaign_id = named or given
    if campaign_id is None:
        problem = Problem(
            file.source,
            None,
            None,
            "campaign",
            "Name the campaign: a 'campaign: {id, name}' block in the file, or --campaign.",
        )
    if problem is not None:
        raise FileProblems(file.source, [problem, *file.read_problems])
    assert campaign_id is not None
    return campaign_id, file.campaign.name if file.campaign else campaign_id


async def load_campaign(
    db: Database,
    file: CampaignFile,
    campaign_id: str | None = None,
    *,
    dry_run: bool = False,
    embedder: Embedder | None = None,
) -> LoadReport:
    """The whole file is checked against itself and the campaign's stored entities before
    anything is written; its problems, every one, are raised together (FileProblems).

    With an `embedder`, the facts are embedded once the load is committed (when it
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


def _declared_types(file: CampaignFile, check: _Check) -> set[str]:
    declared = set()
    for i, written in enumerate(file.relationship_types):
        normalised = normalise_relationship_type(written)
        if re.match(RELATIONSHIP_TYPE_PATTERN, normalised):
            declared.add(normalised)
        else:
            check.report(
                ("relationship_types", i),
                f"{written!r} is not a relationship type: use UPPER_SNAKE words (or words "
                "separated by spaces), such as SWORN_TO.",
            )
    return declared


def _check_left_out(check: _Check, declared: set[str]) -> None:
    """The references of the entries left out for breaking a rule, checked all the same."""
    for kind, position, fields in check.file.left_out:
        path = (kind, position)
        for key in ("source", "target", "subject"):
            if isinstance(fields.get(key), str):
                check.entity(fields[key], (*path, key), as_written=True)
        if kind == "relationships" and isinstance(fields.get("type"), str):
            check.relationship_type(fields["type"], (*path, "type"), declared, as_written=True)
        if isinstance(fields.get("known_by"), list):
            check.known_by(fields["known_by"], path, as_written=True)


def _entities(check: _Check, stored: dict[str, Entity]) -> list[NewEntity]:
    """The file's entities, each listed once; what their names may refer to is set."""
    file = check.file
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
    # An entity listed twice is reported; the first entry is the one its name finds.
    first_planned: dict[str, Entity] = {}
    id_at: dict[str, int] = {}
    name_at: dict[str, int] = {}
    for i, (p, entry) in enumerate(zip(planned, file.entities, strict=True)):
        id_first, name_first = id_at.get(p.id), name_at.get(compact(p.name))
        if id_first is not None:
            how = "id" if entry.id else "name"
            check.listed_twice(
                p,
                ("entities", i, how),
                ("entities", id_first),
                f"An entity with the id {p.id!r}" + ("" if entry.id else " (made from its name)"),
            )
        elif name_first is not None:
            check.listed_twice(
                p,
                ("entities", i, "name"),
                ("entities", name_first),
                f"An entity named {p.name!r}",
            )
        else:
            first_planned[p.id] = p
        id_at.setdefault(p.id, i)
        name_at.setdefault(compact(p.name), i)
    check.use_entities(
        [*first_planned.values(), *(e for e in stored.values() if e.id not in id_at)]
    )
    return [
        NewEntity(
            id=p.id,
            type=p.type,
            name=p.name,
            aliases=p.aliases,
            attributes=p.attributes,
            visibility=check.visibility(entry, ("entities", i)),
        )
        for i, (p, entry) in enumerate(zip(planned, file.entities, strict=True))
    ]


def _relationships(check: _Check, declared: set[str]) -> list[NewRelationship]:
    relationships = []
    relationship_at: dict[tuple[str, str, str], int] = {}
    for i, written in enumerate(check.file.relationships):
        source = check.entity(written.source, ("relationships", i, "source"))
        target = check.entity(written.target, ("relationships", i, "target"))
        rel_type = check.relationship_type(written.type, ("relationships", i, "type"), declared)
        visibility = check.visibility(written, ("relationships", i))
        if source is None or target is None or rel_type is None:
            continue  # the load is refused: it is checked no further
        key = (source.id, rel_type, target.id)
        first = relationship_at.get(key)
        if first is None and is_bidirectional(rel_type):
            first = relationship_at.get((target.id, rel_type, source.id))
        if first is not None:
            check.repeated(("relationships", i), ("relationships", first), "This relationship")
        relationship_at.setdefault(key, i)
        relationships.append(
            NewRelationship(
                source_id=source.id,
                target_id=target.id,
                rel_type=rel_type,
                attributes=written.attributes,
                provenance=_provenance(written.confidence),
                visibility=visibility,
            )
        )
    return relationships


def _facts(check: _Check) -> list[NewFact]:
    facts = []
    fact_at: dict[tuple[str | None, str], int] = {}
    for i, f in enumerate(check.file.facts):
        subject = check.entity(f.subject, ("facts", i, "subject")) if f.subject else None
        visibility = check.visibility(f, ("facts", i))
        if f.subject and subject is None:
            continue  # the load is refused: it is checked no further
        subject_id = subject.id if subject else None
        first = fact_at.setdefault((subject_id, f.text), i)
        if first != i:
            check.repeated(("facts", i, "text"), ("facts", first), "This fact")
        facts.append(
            NewFact(
                subject_id=subject_id,
                text=f.text,
                story_day=f.story_day,
                story_label=f.story_label,
                provenance=_provenance(f.confidence),
                visibility=visibility,
            )
        )
    return facts


async def _apply(memory: CampaignMemory, file: CampaignFile) -> list[LoadChange]:
    """Every item checked first, then those that differ from what is stored written."""
    graph = memory.graph
    stored = {e.id: e for e in await graph.find_entities(limit=MAX_ENTITIES)}
    check = _Check(file)
    entities = _entities(check, stored)
    declared = _declared_types(file, check)
    relationships = _relationships(check, declared)
    facts = _facts(check)
    _check_left_out(check, declared)
    refuse(file.source, check.problems)
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
