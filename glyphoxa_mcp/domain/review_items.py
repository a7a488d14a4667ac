"""What waits for the DM's review: rumours below the campaign's threshold (`rel:ID`,
`fact:ID`) and entities held back from the graph (`import:ID`: a VTT import or a session's
proposal). (pure)"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.domain.models import Fact, NewEntity, Relationship
from glyphoxa_mcp.errors import InvalidInputError

ReviewKind = Literal["relationship", "fact", "import"]
PREFIXES: dict[str, ReviewKind] = {
    "rel": "relationship",
    "relationship": "relationship",
    "fact": "fact",
    "import": "import",
}
SHORT_PREFIX: dict[ReviewKind, str] = {"relationship": "rel", "fact": "fact", "import": "import"}

PendingSource = Literal["foundry", "roll20", "csv", "session"]
"""Where an entity held for review came from: a VTT export, or a session's extraction."""


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


class ReviewQueue(BaseModel):
    """The rumours below a threshold that the DM has not confirmed."""

    model_config = ConfigDict(frozen=True)

    relationships: tuple[Relationship, ...]
    facts: tuple[Fact, ...]


class PendingEntity(BaseModel):
    """An entity held back from the graph until the DM reviews it."""

    model_config = ConfigDict(frozen=True)

    id: int
    source: PendingSource
    source_ref: str
    entity: NewEntity
