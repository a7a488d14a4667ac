"""The review queue as rows of one list: relationships and facts below the review threshold,
then the entities waiting to be written (imports and a session's proposals). (pure)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from glyphoxa_mcp.domain.models import Fact, Relationship
from glyphoxa_mcp.domain.review_items import PendingEntity, ReviewItem, ReviewQueue
from glyphoxa_mcp.recall.relationship_sentences import relationship_sentence


@dataclass(frozen=True)
class ReviewRow:
    item: ReviewItem
    what: str
    confidence: float | None
    source: str
    session_id: str | None
    note: str
    relationship: Relationship | None = None
    fact: Fact | None = None
    pending: PendingEntity | None = None

    @property
    def kind(self) -> Literal["relationship", "fact", "import"]:
        return self.item.kind


@dataclass(frozen=True)
class ReviewColumns:
    """The columns a page of rows fills: one that no row on the page has a value for is
    left out, header and all (held imports have no confidence; rumours from a campaign
    file, no session)."""

    confidence: bool
    session: bool


def review_columns(rows: Sequence[ReviewRow]) -> ReviewColumns:
    return ReviewColumns(
        confidence=any(row.confidence is not None for row in rows),
        session=any(row.session_id for row in rows),
    )


def review_rows(
    queue: ReviewQueue, pending: Sequence[PendingEntity], names: Mapping[str, str]
) -> list[ReviewRow]:
    rows = [
        ReviewRow(
            item=ReviewItem(kind="relationship", id=r.id),
            what=relationship_sentence(
                names.get(r.source_id, r.source_id), r.rel_type, names.get(r.target_id, r.target_id)
            ),
            confidence=r.provenance.confidence,
            source=r.provenance.source,
            session_id=r.provenance.session_id,
            note="rumour",
            relationship=r,
        )
        for r in queue.relationships
    ]
    rows += [
        ReviewRow(
            item=ReviewItem(kind="fact", id=f.id),
            what=f.text,
            confidence=f.provenance.confidence,
            source=f.provenance.source,
            session_id=f.session_id or f.provenance.session_id,
            note=f"rumour about {names.get(f.subject_id, f.subject_id)}"
            if f.subject_id
            else "rumour",
            fact=f,
        )
        for f in queue.facts
    ]
    rows += [
        ReviewRow(
            item=ReviewItem(kind="import", id=p.id),
            what=f"{p.entity.name} ({p.entity.type.value})",
            confidence=None,
            source=p.source,
            session_id=p.source_ref.partition(":")[0] if p.source == "session" else None,
            note=_held_note(p, names),
            pending=p,
        )
        for p in pending
    ]
    return rows


def _held_note(pending: PendingEntity, names: Mapping[str, str]) -> str:
    if pending.entity.id is not None and pending.entity.id in names:
        return "updates an entity"
    if pending.source == "session":
        return "proposed from a session"
    return f"imported from {pending.source}"
