"""What waits for the DM's review, item by item: rumours (`rel:ID`, `fact:ID`) and entities
held back from the graph (`import:ID`: a VTT import or a session's proposal), and what
confirming or rejecting one does. `review confirm|reject` and the DM's desk both act here."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.domain.models import NewRelationship, Provenance, Relationship, build
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.memory import CampaignMemory

ReviewKind = Literal["relationship", "fact", "import"]
PREFIXES: dict[str, ReviewKind] = {
    "rel": "relationship",
    "relationship": "relationship",
    "fact": "fact",
    "import": "import",
}
SHORT_PREFIX: dict[ReviewKind, str] = {"relationship": "rel", "fact": "fact", "import": "import"}


class ReviewItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: ReviewKind
    id: int = Field(ge=1)

    @classmethod
    def parse(cls, reference: str, field: str = "item") -> ReviewItem:
        """'rel:12', 'fact:7' or 'import:3'."""
        prefix, sep, rest = reference.strip().partition(":")
        kind = PREFIXES.get(prefix)
        if not sep or kind is None:
            raise InvalidInputError(
                f"{reference!r}: review items are rel:ID, fact:ID or import:ID.", field=field
            )
        if not rest.isdigit() or int(rest) < 1:
            raise InvalidInputError(
                f"{reference!r}: the id after {prefix}: is a number.", field=field
            )
        return cls(kind=kind, id=int(rest))

    @property
    def reference(self) -> str:
        return f"{SHORT_PREFIX[self.kind]}:{self.id}"


async def confirm(memory: CampaignMemory, item: ReviewItem) -> None:
    """A rumour becomes fact (the DM confirmed it); a held entity is written to the graph."""
    if item.kind == "import":
        pending = await memory.pending.take(item.id)
        await memory.graph.upsert_entity(pending.entity)
    else:
        await memory.curation.confirm(item.kind, item.id)


async def reject(memory: CampaignMemory, item: ReviewItem) -> None:
    """A rumour is deleted; a held entity is dropped."""
    if item.kind == "import":
        await memory.pending.take(item.id)
        return
    if item.kind == "fact":
        deleted = await memory.graph.delete_fact(item.id)
    else:
        relationship = await memory.graph.get_relationship(item.id)
        deleted = await memory.graph.delete_relationship(
            relationship.source_id, relationship.rel_type, relationship.target_id
        )
    if not deleted:
        raise NotFoundError(f"No {item.reference} in campaign {memory.campaign_id!r}.")


async def retype(memory: CampaignMemory, relationship_id: int, rel_type: str) -> Relationship:
    """The DM's correction of a relationship's type: it is stored under the new type as the
    DM's own statement (confirmed), and the old one is deleted, in one transaction."""
    async with memory.db.transaction() as tx:
        graph = CampaignMemory(tx, memory.campaign_id).graph
        old = await graph.get_relationship(relationship_id)
        new = build(
            NewRelationship,
            source_id=old.source_id,
            target_id=old.target_id,
            rel_type=rel_type,
            attributes=old.attributes,
            provenance=Provenance(
                session_id=old.provenance.session_id,
                entry_id=old.provenance.entry_id,
                confidence=1.0,
                source="dm",
                dm_confirmed=True,
            ),
            visibility=old.visibility,
        )
        await graph.delete_relationship(old.source_id, old.rel_type, old.target_id)
        return await graph.upsert_relationship(new)
